export { loadConfig, configWarnings, ConfigError, DEV_DEFAULTS, DEFAULT_CONFIG_DIR } from './load';
export { Secret } from './secret';
export type * from './types';

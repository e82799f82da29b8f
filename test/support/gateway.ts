import { Secret } from '../../src/config/secret';
import { createGatewayClient, type GatewayClient, type GatewayClientOptions } from '../../src/gateway/client';
import { silentLogger } from '../../src/observability/logger';
import { DEFAULT_SETTINGS, type RunningSandbox } from '../../src/sandbox';

/** A gateway client with the sandbox's credentials; options override per test. */
export function clientFor(sandbox: RunningSandbox, options: Partial<GatewayClientOptions> = {}): GatewayClient {
  return createGatewayClient({
    baseUrl: sandbox.baseUrl,
    apiKey: new Secret(DEFAULT_SETTINGS.apiKey),
    apiPin: new Secret(DEFAULT_SETTINGS.apiPin),
    timeoutMs: 2000,
    connectTimeoutMs: 500,
    maxResponseBytes: 1024 * 1024,
    cardRefField: 'UMCardRef',
    logger: silentLogger(),
    ...options,
  });
}

// `npm run config:generate` writes docs/configuration.md from the one table that validates the configuration
// (src/config/schema.ts: names, meanings, parsers and their bounds), the shipped defaults (config/default.json and
// the per-mode files) and the checks across settings (src/config/checks.ts). `npm run config:check` (in
// `npm run lint`) fails when the committed page is not what it would write now, like client:check does.
require('./ts-require');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const PAGE = path.join(root, 'docs', 'configuration.md');
const MODES = ['development', 'test', 'production'];

const GROUPS = {
  '': 'Service',
  redis: 'Redis',
  gateway: 'Gateway',
  events: 'Payment events',
  jwt: "Callers' tokens (JWT)",
  limiter: 'Upstream budget',
  cache: 'Token cache',
  idempotency: 'Idempotency',
  reconcile: 'Reconciler',
  cards: 'Cards (Pay.js)',
  view: 'Views',
  http: 'HTTP',
  sandbox: 'Sandbox emulator (`npm run sandbox`, and the embedded one in development)',
};

function readJson(file) {
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
}

function valueAt(obj, dotted) {
  return dotted.split('.').reduce((node, key) => (node && typeof node === 'object' ? node[key] : undefined), obj);
}

/** 600000 → "10 min": a duration in the largest unit that divides it. */
function duration(ms) {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]]) if (ms !== 0 && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

const isDuration = (setting) => /_MS$/.test(setting.env);
const code = (v) => `\`${v}\``;

function formatValue(setting, value) {
  if (value === null || value === undefined) return undefined;
  if (setting.parse.accepts.secret) return 'a shipped dev value';
  const items = Array.isArray(value) ? value : [value];
  if (Array.isArray(value) && value.length === 0) return 'none';
  const text = code(items.join(','));
  return isDuration(setting) && items.every((v) => typeof v === 'number') ? `${text} (${items.map(duration).join(', ')})` : text;
}

/**
 * The default cell: one value when every mode agrees, else each mode's; where there is none, unset or required
 * (production's required groups of src/config/checks.ts included).
 */
function defaults(setting, layers, optional, requiredInProduction) {
  const need = requiredInProduction.find((check) => check.settings.includes(setting.env));
  const per = MODES.map((mode) => {
    const own = valueAt(layers[mode], setting.path);
    const value = setting.path === 'env' ? 'development' : own !== undefined ? own : valueAt(layers.default, setting.path);
    const shown = formatValue(setting, value);
    if (shown !== undefined && !(Array.isArray(value) && value.length === 0 && need && mode === 'production')) return shown;
    if (need && mode === 'production') return need.settings.length > 1 ? `**required**: one of ${need.settings.map(code).join(', ')}` : '**required**';
    return optional.has(setting.path) ? 'unset' : '**required**';
  });
  const byText = new Map();
  MODES.forEach((mode, i) => byText.set(per[i], [...(byText.get(per[i]) ?? []), mode]));
  return byText.size === 1 ? per[0] : [...byText].map(([text, modes]) => `${modes.join(', ')}: ${text}`).join('; ');
}

function accepts(setting) {
  const a = setting.parse.accepts;
  if (a.min === undefined || a.max === undefined) return a.text;
  const bounds = `${a.min} to ${a.max}`;
  const human = isDuration(setting) ? ` (${duration(a.min)} to ${duration(a.max)})` : '';
  return a.text.startsWith('a comma-separated list') ? `${a.text}, each ${bounds}${human}` : `${a.text}, ${bounds}${human}`;
}

const cell = (text) => String(text).replace(/\|/g, '\\|');

function render() {
  const { SETTINGS, OPTIONAL } = require('../src/config/schema.ts');
  const { CHECKS, REQUIRED_IN_PRODUCTION } = require('../src/config/checks.ts');
  const layers = { default: readJson(path.join(root, 'config', 'default.json')) };
  for (const mode of MODES) layers[mode] = readJson(path.join(root, 'config', `${mode}.json`));

  const out = [
    '# Configuration reference',
    '',
    '<!-- Written by `npm run config:generate` from src/config/schema.ts, config/*.json and src/config/checks.ts. Do not edit by hand: `npm run lint` fails when this page is stale. -->',
    '',
    '**The task:** set tokengate up for an environment: what each setting means, its default in each mode, what it',
    'accepts, and what production refuses.',
    '',
    'Every setting has a key in `config/default.json` (per-mode overrides in `config/<NODE_ENV>.json`) and an environment',
    'variable, which wins; a variable marked "or `_FILE`" is also read from the file `<NAME>_FILE` names (a mounted',
    'Secret; setting both is refused). A bad or missing value stops the service at boot with one line naming each',
    'setting, never its value; a value given but invalid is named for that, not also as missing. Tracing is configured',
    "by OpenTelemetry's standard `OTEL_*` variables ([deploy](deploy.md#10-tracing)).",
    '',
  ];
  const groups = [];
  for (const setting of SETTINGS) {
    const group = setting.path.includes('.') ? setting.path.split('.')[0] : '';
    let entry = groups.find((g) => g.key === group);
    if (!entry) groups.push((entry = { key: group, settings: [] }));
    entry.settings.push(setting);
  }
  for (const group of groups) {
    out.push(`## ${GROUPS[group.key] ?? group.key}`, '', '| variable | default | accepts | meaning |', '|---|---|---|---|');
    for (const setting of group.settings) {
      const checks = CHECKS.filter((c) => c.settings.includes(setting.env));
      const notes = [
        ...(checks.some((c) => c.mode === 'every') ? ['[checks](#in-every-mode)'] : []),
        ...(checks.some((c) => c.mode === 'production') ? ['[production checks](#in-production-only)'] : []),
      ];
      const meaning = notes.length > 0 ? `${setting.doc} See ${notes.join(', ')}.` : setting.doc;
      const name = `${code(setting.env)}${setting.file ? ' (or `_FILE`)' : ''}`;
      out.push(`| ${[name, defaults(setting, layers, OPTIONAL, REQUIRED_IN_PRODUCTION), accepts(setting), meaning].map(cell).join(' | ')} |`);
    }
    out.push('');
  }
  out.push('## Checks across settings', '', 'Each names the settings it reads; every line it prints names them too, never a value.', '');
  out.push('### In every mode', '', '| settings | refused when |', '|---|---|');
  for (const check of CHECKS.filter((c) => c.mode === 'every')) out.push(`| ${cell(check.settings.map(code).join(', '))} | ${cell(check.doc)} |`);
  out.push('', '### In production only', '', 'Development and test accept these (the reconcile deadline is logged there as a warning).', '', '| settings | refused when |', '|---|---|');
  for (const check of [...REQUIRED_IN_PRODUCTION, ...CHECKS.filter((c) => c.mode === 'production')]) out.push(`| ${cell(check.settings.map(code).join(', '))} | ${cell(check.doc)} |`);
  out.push('');
  return out.join('\n');
}

module.exports = { render, PAGE };

if (require.main === module) {
  const page = render();
  if (process.argv.includes('--check')) {
    const file = process.argv[process.argv.indexOf('--check') + 1] ?? PAGE;
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== page) {
      console.error(`${path.relative(root, file)} is stale: run \`npm run config:generate\` and commit it`);
      process.exit(1);
    }
    console.log(`${path.relative(root, file)} is up to date`);
  } else {
    fs.writeFileSync(PAGE, page);
    console.log(`wrote ${path.relative(root, PAGE)}`);
  }
}

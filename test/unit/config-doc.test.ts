import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHECKS, REQUIRED_IN_PRODUCTION } from '../../src/config/checks';
import { SETTINGS } from '../../src/config/schema';

/**
 * docs/configuration.md is written from src/config/schema.ts, config/*.json and src/config/checks.ts by
 * `npm run config:generate`; `npm run config:check` (in `npm run lint`) fails when it is stale.
 */
const ROOT = path.join(__dirname, '..', '..');
const PAGE = path.join(ROOT, 'docs', 'configuration.md');
const check = (file?: string) => spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'config-doc.js'), '--check', ...(file ? [file] : [])], { cwd: ROOT, encoding: 'utf8' });

describe('the configuration reference (docs/configuration.md)', () => {
  const page = readFileSync(PAGE, 'utf8');

  it('when config:check compares the committed page with what the schema, the defaults and the checks give now, then they match', () => {
    const run = check();
    expect({ status: run.status, out: run.stdout.trim() }).toEqual({ status: 0, out: 'docs/configuration.md is up to date' });
  });

  it('when the page says something the schema does not (edited by hand, or a setting changed without regenerating), then config:check fails and says how to fix it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-config-doc-'));
    try {
      const stale = path.join(dir, 'configuration.md');
      writeFileSync(stale, page.replace('| `GATEWAY_TIMEOUT_MS` | `45000` (45 s) |', '| `GATEWAY_TIMEOUT_MS` | `30000` (30 s) |'));
      const run = check(stale);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('is stale: run `npm run config:generate` and commit it');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the page is read, then every setting has a row with its meaning, and every check is listed under the settings it reads', () => {
    const rows = page.split('\n').filter((line) => line.startsWith('| `'));
    for (const setting of SETTINGS) {
      const row = rows.find((r) => r.startsWith(`| \`${setting.env}\``));
      expect({ env: setting.env, doc: setting.doc.trim().length > 0, row: row?.includes(setting.doc.replace(/\|/g, '\\|')) }).toEqual({ env: setting.env, doc: true, row: true });
    }
    const envs = new Set(SETTINGS.map((s) => s.env));
    for (const c of [...REQUIRED_IN_PRODUCTION, ...CHECKS]) {
      expect(c.settings.filter((env) => !envs.has(env))).toEqual([]);
      expect(page).toContain(`| ${c.settings.map((env) => `\`${env}\``).join(', ')} | ${c.doc.replace(/\|/g, '\\|')} |`);
    }
  });

  it('when a setting\'s printed bounds are tried, then its parser takes each bound and refuses one past it (the page cannot promise other bounds than the check)', () => {
    const bounded = SETTINGS.filter((s) => s.parse.accepts.min !== undefined && s.parse.accepts.max !== undefined && !s.parse.accepts.text.includes('list'));
    expect(bounded.length).toBeGreaterThan(40);
    const refuses = (s: (typeof SETTINGS)[number], v: number) => {
      try {
        s.parse(String(v));
        return false;
      } catch {
        return true;
      }
    };
    for (const s of bounded) {
      const { min, max } = s.parse.accepts as { min: number; max: number };
      expect(page).toContain(`${min} to ${max}`);
      expect({ env: s.env, min: refuses(s, min), max: refuses(s, max), below: refuses(s, min - 1), above: refuses(s, max + 1) }).toEqual({ env: s.env, min: false, max: false, below: true, above: true });
    }
  });
});

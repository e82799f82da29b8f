import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';

/**
 * The README's five-step tour (token, list cards, pay, look up, refund), run through bash exactly as written
 * against what `npm start` runs (the built service in development mode), so the tour cannot rot. Two things
 * differ from a reader's terminal, both said here: the `TG=` line names the port this test's service got, and
 * `npm run -s token -- …` runs what package.json says it runs after its build (`node dist/cli/token.js …`; the
 * build is `npm test`'s own pretest), through an `npm` on PATH that does only that.
 */
/** A command's stdout, run from the repository's root (rejects with its stderr when it fails). */
function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ROOT, env: { ...process.env, NODE_ENV: 'development' }, timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message} ${stderr}`)) : resolve(stdout)));
  });
}

interface Step {
  n: number;
  out: string;
}

function tourBlock(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A five-step tour'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('the README has no tour block');
  return block;
}

/** The block with an echo marker before each numbered step ("# 1. …"), so each step's output is told apart. */
function withMarkers(block: string): string {
  return block.replace(/^# (\d)\. /gm, (line, n: string) => `printf '\\n__step_${n}__\\n'\n${line}`) + "printf '\\n__step_end__\\n'\n";
}

function steps(out: string): Step[] {
  // curl -s leaves no newline after a body: each marker starts with one of its own.
  const parts = out.split(/\n__step_(\d|end)__\n/);
  const found: Step[] = [];
  for (let i = 1; i + 1 < parts.length; i += 2) if (parts[i] !== 'end') found.push({ n: Number(parts[i]), out: (parts[i + 1] ?? '').trim() });
  return found;
}

describe('the README\'s five-step tour against npm start', () => {
  let service: ServiceProcess;
  let bin: string;

  beforeAll(async () => {
    service = await startServiceProcess({ NODE_ENV: 'development' });
    bin = mkdtempSync(path.join(os.tmpdir(), 'tokengate-tour-'));
    // `npm run -s token -- <args>`: what package.json's "token" script runs, once "pretoken" (the build) is done.
    writeFileSync(path.join(bin, 'npm'), `#!/usr/bin/env bash\n[ "$1 $2 $3 $4" = "run -s token --" ] || { echo "unexpected npm $*" >&2; exit 64; }\nshift 4\nexec node ${JSON.stringify(path.join(ROOT, 'dist', 'cli', 'token.js'))} "$@"\n`);
    chmodSync(path.join(bin, 'npm'), 0o755);
  });

  afterAll(async () => {
    await service?.stop();
    if (bin) rmSync(bin, { recursive: true, force: true });
  });

  it('when package.json is read, then `npm run token` is a build when the sources are newer and then node dist/cli/token.js (what the test\'s npm runs)', () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect({ pretoken: scripts.pretoken, token: scripts.token }).toEqual({ pretoken: 'node scripts/build-if-stale.js', token: 'node dist/cli/token.js' });
  });

  it('when the build is current, then the real `npm run token` mints a token without building again (issue 41: it rebuilt for 28-48 s)', async () => {
    const stamp = path.join(ROOT, 'dist', '.build-stamp');
    // npm test's pretest has just built: nothing is newer than that build.
    expect(await run('node', ['scripts/build-if-stale.js', '--check'])).toBe('current\n');
    const before = statSync(stamp).mtimeMs;
    const out = await run('npm', ['run', '-s', 'token', '--', '--sub', 'tour-fast', '--scope', 'sales:read']);
    expect(out.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(statSync(stamp).mtimeMs).toBe(before);
  });

  it('when a source is newer than the build, then the pretoken check says the build is stale', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-stale-'));
    try {
      mkdirSync(path.join(dir, 'src'));
      mkdirSync(path.join(dir, 'dist'));
      writeFileSync(path.join(dir, 'src', 'a.ts'), '');
      writeFileSync(path.join(dir, 'dist', '.build-stamp'), '');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script without types
      const { isStale } = require(path.join(ROOT, 'scripts', 'build-if-stale.js')) as { isStale(dir: string): boolean };
      utimesSync(path.join(dir, 'src', 'a.ts'), new Date(2000), new Date(2000));
      expect(isStale(dir)).toBe(false);
      utimesSync(path.join(dir, 'src', 'a.ts'), new Date(), new Date(Date.now() + 60_000));
      expect(isStale(dir)).toBe(true);
      rmSync(path.join(dir, 'dist', '.build-stamp'));
      expect(isStale(dir)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the tour is pasted into bash, then each step answers as its comment says: cards listed, a sale paid, read from the view, refunded', async () => {
    const block = tourBlock();
    expect(block.match(/^TG=http:\/\/127\.0\.0\.1:8080$/gm)).toHaveLength(1);
    const script = withMarkers(block.replace(/^TG=http:\/\/127\.0\.0\.1:8080$/m, `TG=${service.url}`));
    const out = await new Promise<string>((resolve, reject) => {
      execFile('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: ROOT, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: bin, NODE_ENV: 'development' }, timeout: 20000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`the tour failed (${err.message}): ${stderr}\n${stdout}`)) : resolve(stdout),
      );
    });
    const byStep = steps(out);
    expect(byStep.map((s) => s.n)).toEqual([1, 2, 3, 4, 5]);
    const [token, list, pay, lookUp, refund] = byStep.map((s) => s.out);
    expect(token).toBe('');

    // 2. The shopper's cards, masked, exactly one the default, the approving test card among them.
    const cards = JSON.parse(list as string) as { type: string; data: { key: string; default: boolean; ccnum4last: string }[] };
    expect(cards.type).toBe('list');
    expect(cards.data.map((c) => c.key)).toContain('uhuzjx8fdpavl5sea');
    expect(cards.data.filter((c) => c.default)).toHaveLength(1);
    expect(list).not.toMatch(/\d{12,}/);

    // 4. The sale, approved for 12.34, answered from tokengate's view with no gateway call.
    const [head, body] = (lookUp as string).split(/\r?\n\r?\n/, 2);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/^cache-status: tokengate; hit/im);
    const sale = JSON.parse(body as string) as { key: string; result_code: string; amount: string; status: string; customer: string };
    expect(sale).toMatchObject({ result_code: 'A', amount: '12.34', status: 'pending_settlement', customer: 'vty8kn121g3pp8mk' });
    // 3. The same line sent again under the same key (in $KEY) replays the answer: the same sale, not a second one.
    expect(pay).toBe(sale.key);

    // 5. Refunded in full by the back office's token: unsettled, so the gateway voided it.
    expect(JSON.parse(refund as string)).toMatchObject({ type: 'refund', sale: sale.key, amount: '12.34', result_code: 'A', method: 'void' });
  });
});

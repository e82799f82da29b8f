import { readFileSync } from 'node:fs';
import path from 'node:path';
import { validate } from 'dockerfile-utils';
import { imageNodeArgs } from '../support/image';

/** The Dockerfile (issue 5, item 1): linted with dockerfile-utils, then our own rules on its instructions. */

const ROOT = path.resolve(__dirname, '..', '..');
const DOCKERFILE = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Joins `\` continuations and drops comments; enough for the rules below (no heredocs in our file). */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) return;
    if (pending && line.startsWith('#')) return;
    if (!pending) start = i + 1;
    pending += `${line.replace(/\\$/, '')} `;
    if (line.endsWith('\\')) return;
    const [keyword = '', ...rest] = pending.trim().split(/\s+/);
    out.push({ keyword: keyword.toUpperCase(), args: rest.join(' '), line: start });
    pending = '';
  });
  return out;
}

/** The final stage's instructions (everything after the last FROM). */
function finalStage(all: Instruction[]): Instruction[] {
  const lastFrom = all.map((x) => x.keyword).lastIndexOf('FROM');
  return all.slice(lastFrom);
}

const SECRETISH = /(PIN|KEY|SECRET|PASSWORD|TOKEN|REDIS_URL|CREDENTIAL)/i;

function dockerfileProblems(text: string): string[] {
  const all = instructions(text);
  const out: string[] = [];
  const froms = all.filter((x) => x.keyword === 'FROM');
  const stages = new Set(froms.map((f) => /\bAS\s+(\S+)/i.exec(f.args)?.[1]?.toLowerCase()).filter(Boolean));
  if (froms.length < 2) out.push('not multi-stage');
  for (const f of froms) {
    const image = f.args.replace(/--platform=\S+\s+/, '').split(/\s+/)[0] ?? '';
    if (stages.has(image.toLowerCase())) continue; // FROM an earlier stage
    const tag = /^[^@]+:([^/@]+)(@sha256:[a-f0-9]{64})?$/.exec(image)?.[1];
    if (!tag || tag === 'latest' || !/\d+\.\d+/.test(tag)) out.push(`line ${f.line}: FROM ${image} is not pinned to a version tag`);
  }
  const final = finalStage(all);
  const users = final.filter((x) => x.keyword === 'USER');
  const user = users[users.length - 1]?.args.split(':')[0] ?? '';
  if (!/^\d+$/.test(user) || Number(user) === 0) out.push('the final stage does not switch to a numeric non-root USER');
  const cmd = final.filter((x) => x.keyword === 'CMD').pop();
  let argv: unknown;
  try {
    argv = cmd ? JSON.parse(cmd.args) : undefined;
  } catch {
    argv = undefined;
  }
  // node, its flags, the entry point: npm at run time would keep SIGTERM from the process.
  const flagsOnly = (xs: unknown[]) => xs.every((x) => typeof x === 'string' && x.startsWith('--'));
  if (!Array.isArray(argv) || argv[0] !== 'node' || argv[argv.length - 1] !== 'dist/main.js' || !flagsOnly(argv.slice(1, -1))) {
    out.push('CMD is not the exec form ["node", ...flags, "dist/main.js"]');
  }
  if (final.some((x) => x.keyword === 'ENTRYPOINT' && /\bnpm\b/.test(x.args))) out.push('ENTRYPOINT runs npm');
  const env = final.filter((x) => x.keyword === 'ENV').map((x) => x.args).join(' ');
  if (!/\bNODE_ENV=production\b/.test(env)) out.push('NODE_ENV=production is not set in the final stage');
  for (const x of all) {
    if (x.keyword === 'ADD' && /https?:\/\//i.test(x.args)) out.push(`line ${x.line}: ADD of a remote URL`);
    if (x.keyword === 'ENV' || x.keyword === 'ARG') {
      const names = x.args.split(/\s+/).map((a) => a.split('=')[0] ?? '');
      for (const n of names) if (SECRETISH.test(n)) out.push(`line ${x.line}: ${x.keyword} ${n} looks like a secret baked into the image`);
    }
  }
  const copied = final.filter((x) => x.keyword === 'COPY').map((x) => x.args);
  if (copied.some((a) => /^(--\S+\s+)*(\.|\.\/|src|test)\s/.test(a))) out.push('the final stage copies sources or the whole context');
  if (!copied.some((a) => /--from=\S+\s+\S*dist\b/.test(a))) out.push('the final stage does not take dist/ from the build stage');
  if (!final.some((x) => x.keyword === 'EXPOSE' && /\b8080\b/.test(x.args) && /\b9090\b/.test(x.args))) out.push('EXPOSE 8080 9090 is missing');
  return out;
}

describe('Dockerfile', () => {
  it('when linted with dockerfile-utils, then it has no error or warning', () => {
    const diagnostics = validate(DOCKERFILE).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    expect(diagnostics).toEqual([]);
  });

  it('when checked, then it is multi-stage, pinned, non-root, exec-form node, production, secret-free', () => {
    expect(dockerfileProblems(DOCKERFILE)).toEqual([]);
  });

  it('when checked, then the build installs from the lockfile and the runtime gets production dependencies only', () => {
    const all = instructions(DOCKERFILE);
    const runs = all.filter((x) => x.keyword === 'RUN').map((x) => x.args);
    expect(runs.some((r) => /npm ci\b/.test(r) && /--omit=dev/.test(r))).toBe(true);
    expect(runs.some((r) => /npm run build/.test(r))).toBe(true);
    expect(finalStage(all).some((x) => x.keyword === 'RUN' && /\bnpm\b/.test(x.args))).toBe(false);
  });

  it('when read, then `npm start` runs the service exactly as the image does', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(imageNodeArgs(DOCKERFILE)).toContain('--single-threaded-gc');
    expect(pkg.scripts.start).toBe(['node', ...imageNodeArgs(DOCKERFILE), 'dist/main.js'].join(' '));
  });

  it('when read, then .dockerignore keeps out node_modules, dist, .git, tests, bench results, coverage and env files', () => {
    const ignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['node_modules', 'dist', '.git', 'test', 'bench', 'coverage', '*.md', '.env', '.env.*']) expect(ignore).toContain(entry);
  });

  // Each rule must be able to fail.
  it.each([
    ['a single stage', (d: string) => d.replace(/FROM node:\S+ AS (prod-deps|build)[\s\S]*?(?=FROM node:\S+ AS runtime)/, ''), 'not multi-stage'],
    ['a latest base image', (d: string) => d.replace('FROM node:20.20.2-bookworm-slim AS build', 'FROM node:latest AS build'), 'not pinned'],
    ['an untagged base image', (d: string) => d.replace('FROM node:20.20.2-bookworm-slim AS runtime', 'FROM node AS runtime'), 'not pinned'],
    ['root at run time', (d: string) => d.replace('USER 10001:10001', 'USER root'), 'numeric non-root USER'],
    ['npm at run time', (d: string) => d.replace('CMD ["node", "--single-threaded-gc", "dist/main.js"]', 'CMD npm start'), 'exec form'],
    ['a script before the entry point', (d: string) => d.replace('CMD ["node", "--single-threaded-gc", "dist/main.js"]', 'CMD ["node", "-r", "./x.js", "dist/main.js"]'), 'exec form'],
    ['no NODE_ENV', (d: string) => d.replace('NODE_ENV=production', 'NODE_ENV=development'), 'NODE_ENV=production'],
    ['a remote ADD', (d: string) => d.replace('COPY package.json ./\n', 'COPY package.json ./\nADD https://example.com/x.tgz /x.tgz\n'), 'remote URL'],
    ['a baked-in PIN', (d: string) => d.replace('ENV NODE_ENV=production', 'ENV GATEWAY_API_PIN=123456 NODE_ENV=production'), 'GATEWAY_API_PIN looks like a secret'],
  ])('when the Dockerfile has %s, then the check fails', (_name, breakIt, expected) => {
    const brokenCopy = breakIt(DOCKERFILE);
    expect(brokenCopy).not.toBe(DOCKERFILE);
    expect(dockerfileProblems(brokenCopy)).toEqual(expect.arrayContaining([expect.stringContaining(expected)]));
  });

  it('when a Dockerfile has a lint error, then dockerfile-utils reports it', () => {
    expect(validate('FROM node:20.20.2-bookworm-slim\nEXPOSE port\nCMD\n').length).toBeGreaterThan(0);
  });
});

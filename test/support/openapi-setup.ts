import { checkAnswer } from './openapi-check';

/**
 * Jest setupFilesAfterEnv (issue 14, item 2): every answer a suite receives from tokengate, through the global
 * fetch or supertest, is checked against openapi.json (status documented, body schema, required headers). A
 * mismatch fails the test that received it. A suite whose apps are not tokengate's (stub routes mounted on
 * parts of the HTTP edge) calls `exemptFromOpenapiCheck(why)` once.
 */
const problems: string[] = [];
let paused = false;

/** For the whole test file: its answers come from stub apps, not from tokengate's routes. */
export function exemptFromOpenapiCheck(_why: string): void {
  paused = true;
}

const realFetch = globalThis.fetch;
globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const res = await realFetch(input, init);
  if (paused) return res;
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
  if (!/^https?:\/\/(127\.0\.0\.1|localhost)[:/]/.test(url)) return res;
  const body = await res.clone().text();
  problems.push(...checkAnswer(method, url, res.status, (n) => res.headers.get(n), body));
  return res;
};

// supertest: Test#end is where every request finishes (then() and await go through it).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- patched at load time, before suites import it
const { Test } = require('supertest') as { Test: { prototype: { end: (fn?: (err: unknown, res: unknown) => void) => unknown } } };
const originalEnd = Test.prototype.end;
Test.prototype.end = function end(this: { method: string; url: string }, fn?: (err: unknown, res: unknown) => void) {
  const { method, url } = this;
  return originalEnd.call(this, (err: unknown, res: unknown) => {
    const r = res as { status?: number; text?: string; headers?: Record<string, string> } | undefined;
    if (!paused && r && typeof r.status === 'number') {
      problems.push(...checkAnswer(method, url, r.status, (n) => r.headers?.[n.toLowerCase()], r.text ?? ''));
    }
    fn?.(err, res);
  });
};

afterEach(() => {
  if (problems.length === 0) return;
  const found = [...new Set(problems.splice(0))];
  throw new Error(`answers that do not match openapi.json:\n  ${found.join('\n  ')}`);
});

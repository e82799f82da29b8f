/**
 * Polls `check` until it holds, for tests whose effect lands a moment later (a batched Redis write, a server
 * seeing a client's abort). A fixed sleep is a guess about the box's speed; a loaded CI box guesses wrong.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000, everyMs = 20): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * For a coverage test that judges what the other tests of its file did (declared-keys.test.ts: every script ran
 * checked; transactions-one-slot.test.ts: every MULTI and pipeline did): whether they all ran before it. A `-t`
 * filter or an `.only` leaves some out, and then nothing can be judged; in a full run they all have.
 *
 * Read from the test runner's own state: jest-circus keeps its tree of describe blocks and tests (each with its
 * `mode` as written and its `status` once run: 'done', or 'skip' for one a filter left out) on the global, under a
 * symbol it does not export (jest-circus/build/types.js, STATE_SYM; Jest 29). When that cannot be read, or the
 * caller is not the file's last test, this throws instead of answering, so a full run never passes unjudged.
 */

interface CircusTest {
  type: 'test';
  name: string;
  mode?: string;
  status?: string | null;
}
interface CircusBlock {
  type: 'describeBlock';
  name: string;
  mode?: string;
  children: Array<CircusBlock | CircusTest>;
}
interface CircusState {
  rootDescribeBlock: CircusBlock;
  currentlyRunningTest: CircusTest | null;
}

function circusState(): CircusState {
  const sym = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === 'JEST_STATE_SYMBOL');
  const state = sym === undefined ? undefined : ((globalThis as unknown as Record<symbol, unknown>)[sym] as Partial<CircusState> | undefined);
  if (!state?.rootDescribeBlock || !Array.isArray(state.rootDescribeBlock.children)) throw new Error('file-runs: cannot read the test runner\'s state (is it still jest-circus?)');
  return state as CircusState;
}

/** The file's tests in the order they were written, each with whether it is skipped as written (`it.skip`, `it.todo`, in a `describe.skip`). */
function testsOf(block: CircusBlock, skippedAbove = false): Array<{ test: CircusTest; asWrittenSkipped: boolean }> {
  const skipped = skippedAbove || block.mode === 'skip';
  return block.children.flatMap((child) =>
    child.type === 'test' ? [{ test: child, asWrittenSkipped: skipped || child.mode === 'skip' || child.mode === 'todo' }] : testsOf(child, skipped));
}

/** True when every other test of the calling test's file (but those skipped as written) has run; the caller must be the file's last test. */
export function otherTestsAllRan(): boolean {
  const state = circusState();
  const self = state.currentlyRunningTest;
  const tests = testsOf(state.rootDescribeBlock);
  if (!self || tests[tests.length - 1]?.test !== self) throw new Error('file-runs: call otherTestsAllRan() from the last test of its file');
  return tests.slice(0, -1).every(({ test, asWrittenSkipped }) => asWrittenSkipped || test.status === 'done');
}

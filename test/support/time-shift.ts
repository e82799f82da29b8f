import { startSandbox as startPlainSandbox, type RunningSandbox } from '../../src/sandbox';

/**
 * Running the tests as if at another time of day or date, without faking the OS clock: `TEST_CLOCK_SHIFT_MS=N`
 * (a non-negative integer) moves the test clocks N ms ahead as they start. Unset or 0 (CI), nothing moves.
 *
 * What moves: the sandbox's clock (its ACH cut-offs, batch close, created dates) for every sandbox a test starts
 * through startBff() or startSandbox() below, and tokengate's clock (`POST /test/clock`: renewals, day pacing,
 * settlement sweeps; the embedded sandbox's follows it) for every service startBff() starts. What does not: the
 * wall clock itself (timers, JWT expiry, the rate windows, which the real gateway keeps on its wall clock too),
 * unit tests that call Date.now(), and services a test starts by other means.
 */
export function clockShiftMs(): number {
  const raw = process.env.TEST_CLOCK_SHIFT_MS;
  if (raw === undefined || raw.trim() === '') return 0;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`TEST_CLOCK_SHIFT_MS must be a non-negative integer of ms, not ${JSON.stringify(raw)}`);
  return ms;
}

/** Moves a sandbox's clock by the shift (once, as it starts). */
export function shiftSandboxClock(sandbox: RunningSandbox): RunningSandbox {
  const shift = clockShiftMs();
  if (shift > 0) sandbox.clock.advance(shift);
  return sandbox;
}

/** Moves tokengate's clock by the shift through its admin port's `POST /test/clock` (once, on a fresh key prefix). */
export async function shiftServiceClock(adminUrl: string): Promise<void> {
  const shift = clockShiftMs();
  if (shift === 0) return;
  const res = await fetch(`${adminUrl}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: shift }) });
  if (!res.ok) throw new Error(`TEST_CLOCK_SHIFT_MS: POST /test/clock answered ${res.status}`);
}

/** src/sandbox's startSandbox, its clock moved by the shift: what a time-sensitive sandbox test imports. */
export async function startSandbox(...args: Parameters<typeof startPlainSandbox>): Promise<RunningSandbox> {
  return shiftSandboxClock(await startPlainSandbox(...args));
}

/**
 * The ACH clock's cut-offs are Pacific times (gateway-facts.md, ACH: submitted at 5 pm Pacific, settled at 8 am
 * Pacific): instants of a given Pacific wall-clock hour, daylight saving included (Intl's time zone data).
 */

const ZONE = 'America/Los_Angeles';
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const offsetFormat = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, timeZoneName: 'shortOffset' });
const dateFormat = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' });

/** Minutes Pacific time is ahead of UTC at `ms` (-480 in winter, -420 in summer). */
function offsetMinutes(ms: number): number {
  const name = offsetFormat.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT-8';
  const m = /GMT([+-])(\d{1,2})(?::(\d\d))?/.exec(name);
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

/** The Pacific calendar day of `ms` as a UTC midnight (for day arithmetic). */
function pacificDay(ms: number): number {
  const [y, m, d] = dateFormat.format(new Date(ms)).split('-').map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d);
}

/** The instant at `hour`:00 Pacific on the Pacific day `dayUtcMidnight` (from pacificDay, plus whole days). */
function atHour(dayUtcMidnight: number, hour: number): number {
  const local = dayUtcMidnight + hour * HOUR_MS;
  const first = local - offsetMinutes(local + 8 * HOUR_MS) * 60_000;
  return local - offsetMinutes(first) * 60_000;
}

/** The first instant strictly after `afterMs` at `hour`:00 Pacific. */
export function nextPacificHour(afterMs: number, hour: number): number {
  const day = pacificDay(afterMs);
  const today = atHour(day, hour);
  return today > afterMs ? today : atHour(day + DAY_MS, hour);
}

/** `hour`:00 Pacific, `days` Pacific days after the day of `ms`. */
export function pacificHourDaysAfter(ms: number, days: number, hour: number): number {
  return atHour(pacificDay(ms) + days * DAY_MS, hour);
}

/** YYYY-MM-DD of `ms` in Pacific time (the `returned` date of ach.returned). */
export function pacificDate(ms: number): string {
  return dateFormat.format(new Date(ms));
}

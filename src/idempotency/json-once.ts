/**
 * The JSON text of a write's answer body, made once per body object: a sale's body (about 1,100 characters) is
 * kept for replays (scrub.ts), carried by its payment event (src/events) and sent (src/http/send.ts), and each
 * used to stringify it again (issue 40, item 1). Bodies are not changed once rendered: what is sent is what was
 * kept, so the one text serves all three. A body read back from Redis is a new object, and gets its own text.
 */
const texts = new WeakMap<object, string>();

/** JSON.stringify(value), remembered for an object or array (undefined: undefined, as JSON.stringify answers). */
export function jsonOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const known = texts.get(value);
  if (known !== undefined) return known;
  const text = JSON.stringify(value) as string | undefined;
  if (text !== undefined) texts.set(value, text);
  return text;
}

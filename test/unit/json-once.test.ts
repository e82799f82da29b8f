import type { Response } from 'express';
import fc from 'fast-check';
import { createMemoryEventLog } from '../../src/events/memory-event-log';
import { send } from '../../src/http/send';
import { storedResponseJson } from '../../src/idempotency/scrub';

/** The least of an Express response send() uses, keeping what it was given. */
function fakeResponse() {
  const headers: Record<string, unknown> = {};
  let ended: string | undefined;
  const res = {
    statusCode: 200,
    req: { method: 'POST' },
    status(code: number) {
      res.statusCode = code;
      return res;
    },
    set(h: Record<string, string> | string, v?: string) {
      if (typeof h === 'string') headers[h.toLowerCase()] = v;
      else for (const [k, x] of Object.entries(h)) headers[k.toLowerCase()] = x;
      return res;
    },
    setHeader(k: string, v: unknown) {
      headers[k.toLowerCase()] = v;
    },
    end(body?: string) {
      ended = body;
    },
  };
  return { res, headers, body: () => ended };
}

describe('a write answer\'s JSON, made once (issue 40, item 1)', () => {
  it('when a sale\'s answer is kept, its event appended and the answer sent, then its body is stringified once, and all three carry the same text', async () => {
    const body = { type: 'sale', key: 'tx1', amount: '10.00', customer: { key: 'c1' }, note: 'é "quoted" \u2028' };
    const response = { status: 201, body, headers: { location: '/v1/sales/tx1' } };
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      const kept = storedResponseJson(response);
      const log = createMemoryEventLog({ retentionMs: 60_000 });
      await log.append([{ type: 'sale.succeeded', change: 'sale:tx1', data: body }]);
      const { res, headers, body: sent } = fakeResponse();
      send(res as unknown as Response, { response, replayed: false });
      expect(stringify.mock.calls.filter(([v]) => v === body)).toHaveLength(1);
      const text = JSON.stringify(body);
      expect(kept).toBe(JSON.stringify({ status: 201, body, headers: response.headers }));
      expect(sent()).toBe(text);
      expect(headers['content-length']).toBe(Buffer.byteLength(text));
      expect((await log.list(undefined, 10))[0]?.data).toEqual(body);
    } finally {
      stringify.mockRestore();
    }
  });

  it('when any answer with no card number is kept, then the text is exactly JSON.stringify of status, body and headers', () => {
    const letters = fc.string({ unit: fc.constantFrom('a', 'b', 'é', ' ', '"', '\\', '\n'), maxLength: 8 });
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, letters, fc.integer({ min: -999, max: 999 }), fc.boolean(), fc.constant(null), tie('a'), tie('o')),
      a: fc.array(tie('v'), { maxLength: 3 }),
      o: fc.dictionary(letters, tie('v'), { maxKeys: 3 }),
    }));
    fc.assert(
      fc.property(fc.oneof(value.o, value.a), fc.dictionary(fc.constantFrom('location', 'retry-after'), letters), fc.constantFrom(200, 201, 402, 502), (body, headers, status) => {
        expect(storedResponseJson({ status, body, headers })).toBe(JSON.stringify({ status, body, headers }));
      }),
      { numRuns: 500 },
    );
  });
});

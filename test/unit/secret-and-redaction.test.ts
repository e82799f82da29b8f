import { inspect } from 'node:util';
import { Secret } from '../../src/config/secret';
import { CapturingStream, createLogger } from '../../src/observability/logger';
import { redactString, redactValue } from '../../src/observability/redact';
import { separatorForms, TEST_CARDS } from '../support/test-cards';

const PIN = 'pin-987654321';

describe('Secret', () => {
  const s = new Secret(PIN);
  it('when printed in any form, then it reads [redacted]', () => {
    expect(String(s)).toBe('[redacted]');
    expect(`${s}`).toBe('[redacted]');
    expect(JSON.stringify({ s })).toBe('{"s":"[redacted]"}');
    expect(inspect({ s })).not.toContain(PIN);
    expect(inspect(s, { showHidden: true, depth: 5 })).not.toContain(PIN);
  });
  it('when revealed on purpose, then the value comes back', () => {
    expect(s.reveal()).toBe(PIN);
  });
});

describe('redaction', () => {
  it('when a value holds credentials by shape, then they are replaced', () => {
    const hash = 's2/abcdefghijklmnop/b74c2fa91fb0a09755e377ee8e20aa86d2b92c3d2f277280db595f636bb190e6';
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJlX2hlcmU';
    const out = redactString(`auth Basic QUJDOkRFRg== hash ${hash} bearer ${jwt} Bearer ${jwt}`);
    expect(out).not.toContain('QUJDOkRFRg');
    expect(out).not.toContain('b74c2fa9');
    expect(out).not.toContain('eyJzdWIiOiJ1MSJ9');
  });
  it('when an object has sensitive field names, then their values are replaced at any depth', () => {
    const out = redactValue({ a: { cvc: '123', Authorization: 'x', 'api-pin': '1', nested: [{ card_number: '4000' }] }, ok: 'fine' });
    expect(out).toEqual({ a: { cvc: '[redacted]', Authorization: '[redacted]', 'api-pin': '[redacted]', nested: [{ card_number: '[redacted]' }] }, ok: 'fine' });
  });
  it('when a number field is a card number, then it is replaced', () => {
    expect(redactValue({ n: 4000100011112224 })).toEqual({ n: '[redacted]' });
  });
});

describe('logger', () => {
  it('when code logs card data, PINs and headers, then no line carries them', () => {
    const stream = new CapturingStream();
    const secret = new Secret(PIN);
    const logger = createLogger({ stream, secrets: [secret] });
    logger.info('charging 4000 1000 1111 2224', { headers: { authorization: 'Basic abc' }, body: { creditcard: { number: '4000100011112224', cvc: '123' } }, pin: secret, leaked: `pin was ${PIN}` });
    logger.error('failed', { err: new Error(`card 5555444433332226 refused with ${PIN}`) });
    const text = stream.text();
    expect(stream.lines).toHaveLength(2);
    for (const forbidden of ['4000 1000 1111 2224', '4000100011112224', '5555444433332226', PIN, 'Basic abc', '"123"']) {
      expect(text).not.toContain(forbidden);
    }
    const first = JSON.parse(stream.lines[0] as string);
    expect(first).toMatchObject({ level: 'info', message: 'charging [card]', pin: '[redacted]' });
  });

  it('when a line is below the level, then none of it is formatted (its fields are never read), on the logger and its children alike; raised at run time, the level lets it through', () => {
    const stream = new CapturingStream();
    const logger = createLogger({ level: 'info', stream });
    let reads = 0;
    const meta = { get reason() {
      reads++;
      return 'bad_signature';
    } };
    logger.debug('authentication failed', meta);
    logger.child({ request_id: 'r1' }).debug('authentication failed', meta);
    logger.child({ request_id: 'r1' }).verbose('request refused', meta);
    expect([reads, stream.lines.length]).toEqual([0, 0]);
    logger.level = 'debug';
    logger.child({ request_id: 'r2' }).debug('authentication failed', meta);
    expect(reads).toBeGreaterThan(0);
    expect(JSON.parse(stream.lines[0] as string)).toMatchObject({ level: 'debug', message: 'authentication failed', reason: 'bad_signature', request_id: 'r2' });
  });

  it('when a log line holds card numbers of any network in any separator form, then every one is redacted and clock-based ids are kept', () => {
    const stream = new CapturingStream();
    const logger = createLogger({ stream });
    const cards = TEST_CARDS.flatMap((c) => separatorForms(c.number));
    logger.info(`numbers: ${cards.join(' ; ')}`, { invoice: 'ORD-1795369789000', key: 'order-1795369789000-3', nested: { list: cards } });
    const text = stream.text();
    expect(cards.filter((form) => text.includes(form))).toEqual([]);
    expect(text).toContain('ORD-1795369789000');
    expect(text).toContain('order-1795369789000-3');
  });
});

import express from 'express';
import request from 'supertest';
import { isSafeRequestId, requestId } from '../../src/http/request-id';
import { CapturingStream, createLogger } from '../../src/observability/logger';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function app() {
  const stream = new CapturingStream();
  const server = express();
  server.use(requestId(createLogger({ stream })));
  server.get('/probe', (req, res) => {
    req.log.info('hello');
    res.json({ id: req.id });
  });
  return { server, stream };
}

describe('requestId', () => {
  it('when the caller sends a safe id, then it is kept in the header, req.id and the log', async () => {
    const { server, stream } = app();
    const res = await request(server).get('/probe').set('X-Request-Id', 'frontend.req_0001-abc');
    expect(res.headers['x-request-id']).toBe('frontend.req_0001-abc');
    expect(res.body.id).toBe('frontend.req_0001-abc');
    expect(stream.text()).toContain('"request_id":"frontend.req_0001-abc"');
  });

  it('when no id is sent, then a new UUID is used', async () => {
    const res = await request(app().server).get('/probe');
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(res.body.id).toBe(res.headers['x-request-id']);
  });

  it.each(['short', 'has space in it', '<script>alert(1)</script>', 'x'.repeat(129), 'line\u00e9break-ish', '4000100011112224'])(
    'when the caller id is "%s", then it is replaced by a new UUID',
    async (offered) => {
      const res = await request(app().server).get('/probe').set('X-Request-Id', offered);
      expect(res.headers['x-request-id']).toMatch(UUID);
    },
  );

  it('when two requests arrive without ids, then their ids differ', async () => {
    const { server } = app();
    const [a, b] = await Promise.all([request(server).get('/probe'), request(server).get('/probe')]);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('when checked directly, then only 8 to 128 safe characters pass', () => {
    expect(isSafeRequestId('a'.repeat(8))).toBe(true);
    expect(isSafeRequestId('a'.repeat(128))).toBe(true);
    expect(isSafeRequestId('a'.repeat(7))).toBe(false);
    expect(isSafeRequestId(['abcdefgh'])).toBe(false);
  });
});

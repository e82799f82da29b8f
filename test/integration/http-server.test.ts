import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { createAppServer } from '../../src/http';

/** Serves `app` with createAppServer on port 0; records, before Express sees them, the prototypes req and res were born with. */
async function serve(app: Express, options: http.ServerOptions = {}) {
  const server = createAppServer(app, options);
  const born: { req: unknown; res: unknown }[] = [];
  server.prependListener('request', (req, res) => born.push({ req: Object.getPrototypeOf(req), res: Object.getPrototypeOf(res) }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, born, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function echoApp(name: string): Express {
  const app = express();
  app.get('/who', (req, res) => {
    res.set('X-App', (req.app as Express & { locals: { name: string } }).locals.name).status(201).json({ app: name, header: req.get('x-probe'), query: req.query.q });
  });
  app.locals.name = name;
  return app;
}

describe('createAppServer', () => {
  it('hands Express requests and responses already made with the app prototypes, and Express helpers work on them', async () => {
    const app = echoApp('api');
    const s = await serve(app);
    try {
      const res = await fetch(`${s.url}/who?q=1`, { headers: { 'x-probe': 'p' } });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-app')).toBe('api');
      expect(await res.json()).toEqual({ app: 'api', header: 'p', query: '1' });
      // Born with them: Express's per-request Object.setPrototypeOf then changes nothing.
      expect(s.born).toEqual([{ req: app.request, res: app.response }]);
      const req = Object.create(app.request) as object;
      expect(req).toBeInstanceOf(http.IncomingMessage);
      expect(Object.create(app.response) as object).toBeInstanceOf(http.ServerResponse);
    } finally {
      await s.close();
    }
  });

  it('keeps two apps apart (the public API and the admin port each have their own)', async () => {
    const api = echoApp('api');
    const admin = echoApp('admin');
    const a = await serve(api);
    const b = await serve(admin);
    try {
      expect(await (await fetch(`${a.url}/who`)).json()).toMatchObject({ app: 'api' });
      expect((await fetch(`${b.url}/who`)).headers.get('x-app')).toBe('admin');
      expect(api.request).not.toBe(admin.request);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('passes the server options through', async () => {
    const s = await serve(echoApp('api'), { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 120_000 });
    try {
      expect([s.server.keepAliveTimeout, s.server.headersTimeout, s.server.requestTimeout]).toEqual([65_000, 66_000, 120_000]);
    } finally {
      await s.close();
    }
  });
});

'use strict';
/**
 * The naive baseline (issue 6): Express + http-proxy-middleware, forwarding POST /v1/sales to the gateway's
 * /api/v2/transactions with a static gateway Authorization header, and nothing else (no JWT, no card guard,
 * no idempotency, no budget, no token cache). Env: PORT, TARGET (sandbox origin), GATEWAY_AUTH (header value).
 */
const http = require('node:http');
const express = require('express');
const { createProxyMiddleware } = require('http-proxy-middleware');

const port = Number(process.env.PORT);
const target = process.env.TARGET;
const auth = process.env.GATEWAY_AUTH;
if (!port || !target || !auth) {
  console.error('naive-proxy: PORT, TARGET and GATEWAY_AUTH are required');
  process.exit(1);
}
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(target)) {
  console.error('naive-proxy: TARGET must be http://127.0.0.1:<port> (loopback only)');
  process.exit(1);
}

const app = express();
app.use(
  createProxyMiddleware({
    target,
    pathFilter: '/v1/sales',
    pathRewrite: { '^/v1/sales': '/api/v2/transactions' },
    agent: new http.Agent({ keepAlive: true, maxSockets: 256 }),
    on: {
      proxyReq: (proxyReq) => {
        proxyReq.setHeader('Authorization', auth);
      },
    },
  }),
);
const server = http.createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`naive proxy on http://127.0.0.1:${port} -> ${target}`));
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

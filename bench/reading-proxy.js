'use strict';
/**
 * The floor of any BFF that reads what it forwards (issue 15): Express with express.json(), one undici call to
 * the gateway with a fixed signed header and a fixed cardref, the gateway's answer parsed and sent as JSON.
 * Nothing else: no JWT, no card guard, no idempotency, no budget, no token cache, no metrics, no logs.
 * Env: PORT, TARGET (sandbox origin), GATEWAY_AUTH (header value), CARDREF.
 */
const express = require('express');
const { Agent } = require('undici');

const { PORT, TARGET, GATEWAY_AUTH, CARDREF } = process.env;
if (!PORT || !TARGET || !GATEWAY_AUTH || !CARDREF) {
  console.error('reading-proxy: PORT, TARGET, GATEWAY_AUTH and CARDREF are required');
  process.exit(1);
}
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(TARGET)) {
  console.error('reading-proxy: TARGET must be http://127.0.0.1:<port> (loopback only)');
  process.exit(1);
}

const agent = new Agent({ connections: 64, pipelining: 1 });
const app = express();
app.set('etag', false);
app.use(express.json());
app.post('/v1/sales', async (req, res, next) => {
  try {
    const body = JSON.stringify({ command: 'cc:sale', amount: req.body.amount, UMCardRef: CARDREF });
    const answer = await agent.request({
      origin: TARGET, path: '/api/v2/transactions', method: 'POST', body,
      headers: { authorization: GATEWAY_AUTH, 'content-type': 'application/json' },
    });
    const text = await answer.body.text();
    res.status(answer.statusCode === 200 ? 201 : 502).json(JSON.parse(text));
  } catch (err) {
    next(err);
  }
});
const server = app.listen(Number(PORT), '127.0.0.1');
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

import { existsSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { startBff, token, type Bff } from '../support/bff';
import { exposes, monitoringMetricNames } from '../support/monitoring';

/**
 * Every metric the alerts and the Grafana dashboard (k8s/components/monitoring) read is declared in /metrics of
 * the built service running against Redis, after one sale. A renamed metric breaks this test, not a dashboard
 * nobody looks at until an incident.
 */
// Fed by issue 12's reconciler (src/reconcile, another branch): until it is merged these two are expected to
// be absent, and the test says so; once src/reconcile exists they are required like every other name.
const RECONCILER_METRICS = ['tokengate_unknown_outcomes_oldest_age_seconds', 'tokengate_unknown_outcomes_open'];
const reconcilerMerged = existsSync(path.join(__dirname, '..', '..', 'src', 'reconcile'));

describe('monitoring as code against a running service', () => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({ mode: 'process' });
  });
  afterAll(() => bff?.stop());

  it('when a sale has run, then every metric name the alerts and the dashboard use is in /metrics', async () => {
    const cust = bff.sandbox.fixtures.firstCustomer().key;
    const pm = (bff.sandbox.fixtures.paymentMethods(cust)[0] as { key: string }).key;
    const bearer = token({ sub: 'monitoring', custkey: cust, scope: 'sales:create' });
    const sale = await request(bff.url).post('/v1/sales').set('Authorization', `Bearer ${bearer}`).set('Idempotency-Key', `mon-${Date.now()}`).send({ customer: cust, payment_method: pm, amount: '1.00' });
    expect(sale.status).toBeLessThan(500);

    const exposition = (await request(bff.adminUrl).get('/metrics')).text;
    const names = monitoringMetricNames();
    expect(names.length).toBeGreaterThan(8);
    const missing = names.filter((n) => !exposes(exposition, n));
    expect(missing).toEqual(reconcilerMerged ? [] : RECONCILER_METRICS);
    // The sales route label the alert matches is the one the service writes.
    expect(exposition).toMatch(/tokengate_http_request_duration_seconds_count\{[^}]*route="\/v1\/sales"/);
  });
});

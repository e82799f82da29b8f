import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { find, renderObjects, renderWithComponents, schemaProblems, type K8sObject } from './packaging-k8s';
import { dashboard, exposes, monitoringMetricNames, ruleGroups, type DashboardPanel } from '../support/monitoring';

/**
 * k8s/components/monitoring: the alerts pass `promtool check rules` (Debian's prometheus package; .ci/run
 * installs it) and a schema check of their own; the dashboard is a well-formed Grafana JSON in a ConfigMap the
 * Grafana sidecar picks up. That the metrics they read exist is test/integration/monitoring-metrics.test.ts.
 */
const PROMTOOL = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!PROMTOOL) {
  // eslint-disable-next-line no-console -- the one skip message, printed once at load time so it is never silent
  console.warn('packaging-monitoring: promtool SKIPPED, it is missing; install it with `apt-get install -y prometheus` (.ci/run does)');
}
const itWithPromtool = PROMTOOL ? it : it.skip;

const ROOT = path.join(__dirname, '..', '..');
/** scripts/docs-check.js, the runbook half of `npm run docs:check` (a plain script: typed here by hand). */
interface DocsCheck {
  alertRules(): { alert: string; runbookUrl: string | undefined }[];
  runbookProblems(rules?: { alert: string; runbookUrl: string | undefined }[]): string[];
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script without types
const docsCheck = require('../../scripts/docs-check') as DocsCheck;

const ALERTS = ['TokengateUpstream429', 'TokengateUnknownOutcomesStale', 'TokengateUnknownOutcomePastDeadline', 'TokengateBudgetQueueWaitHigh', 'TokengateRedisUnreachable', 'TokengateSalesErrorRate', 'TokengateDayBudgetRunsOut', 'TokengateEventsUndelivered', 'TokengateRenewalsLate', 'TokengateRenewalsSpilled', 'TokengateSettlementMismatch'];

function promtool(groups: unknown): { ok: boolean; output: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-promtool-'));
  try {
    const file = path.join(dir, 'rules.yaml');
    writeFileSync(file, stringify(groups));
    const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `promtool test rules`: the rule unit tests of `tests` (its own `rule_files` is set here) against `groups`. */
function promtoolTest(groups: unknown, tests: Record<string, unknown>): { ok: boolean; output: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-promtool-'));
  try {
    writeFileSync(path.join(dir, 'rules.yaml'), stringify(groups));
    writeFileSync(path.join(dir, 'test.yaml'), stringify({ rule_files: ['rules.yaml'], ...tests }));
    const run = spawnSync('promtool', ['test', 'rules', 'test.yaml'], { cwd: dir, encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('k8s/components/monitoring', () => {
  const production = renderObjects('overlays/production');
  const objects = renderWithComponents('overlays/production', ['components/monitoring']);
  const names = (list: K8sObject[]) => list.map((o) => `${o.kind}/${o.metadata.name}`).sort();

  it('when included in the production overlay, then it adds a PodMonitor, a PrometheusRule and the dashboard ConfigMap, each schema-valid', () => {
    expect(objects.flatMap(schemaProblems)).toEqual([]);
    const added = names(objects).filter((n) => !names(production).includes(n));
    expect(added).toEqual(['ConfigMap/tokengate-grafana-dashboard', 'PodMonitor/tokengate', 'PrometheusRule/tokengate']);
    const monitor = find<{ spec: { podMetricsEndpoints: { port: string; path: string }[] } }>(objects, 'PodMonitor', 'tokengate');
    expect(monitor.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'admin', path: '/metrics' })]);
  });

  itWithPromtool('when the rules are checked with promtool, then they pass', () => {
    const { ok, output } = promtool(ruleGroups());
    expect(output).toContain(`SUCCESS: ${ALERTS.length} rules found`);
    expect(ok).toBe(true);
  });

  itWithPromtool('when a rule is broken (bad PromQL, bad duration), then promtool fails (the check can fail)', () => {
    const groups = structuredClone(ruleGroups());
    (groups.groups[0]?.rules[0] as { expr: string }).expr = 'sum by (namespace (tokengate_redis_up';
    expect(promtool(groups).ok).toBe(false);
    const late = structuredClone(ruleGroups());
    (late.groups[0]?.rules[0] as { for?: string }).for = 'five minutes';
    expect(promtool(late).ok).toBe(false);
  });

  itWithPromtool('when the day\'s budget falls steadily, then TokengateDayBudgetRunsOut fires for that endpoint alone and names the hour it runs out (promtool test rules)', () => {
    // 1000 left, 5 fewer a minute on both pods of v2; k2 does not move, k3 rises (without the clamp it would
    // forecast a time in the past, and fire). At 90 min: 550 left at 5/min, 110 min more: 03:20 (epoch 0).
    const series = (endpoint: string, pod: string, values: string) => ({ series: `tokengate_budget_day_remaining{namespace="ns",endpoint="${endpoint}",pod="${pod}"}`, values });
    const expected = {
      exp_labels: { severity: 'warning', namespace: 'ns', endpoint: 'v2' },
      exp_annotations: {
        runbook_url: 'docs/runbooks/TokengateDayBudgetRunsOut.md',
        summary: 'At this rate the day\'s budget of v2 runs out at 1970-01-01 03:20:00 +0000 UTC',
        description: '550 calls left in the day window. Reads and background work give way first (day pacing); look for a read storm or a looping caller (tokengate_limiter_refusals_total by reason) before raising the key\'s limits.',
      },
    };
    const { ok, output } = promtoolTest(ruleGroups(), {
      evaluation_interval: '1m',
      tests: [{
        interval: '1m',
        input_series: [series('v2', 'a', '1000-5x180'), series('v2', 'b', '1000-5x180'), series('k2', 'a', '1000+0x180'), series('k3', 'a', '100+5x180')],
        alert_rule_test: [
          { eval_time: '90m', alertname: 'TokengateDayBudgetRunsOut', exp_alerts: [expected] },
          // Already forecast within 4 h at 10 min (190 min left), but not yet held for 15 min: pending only.
          { eval_time: '10m', alertname: 'TokengateDayBudgetRunsOut', exp_alerts: [] },
        ],
      }],
    });
    expect(output).toContain('SUCCESS');
    expect(ok).toBe(true);
  });

  itWithPromtool('when an unknown outcome outlives RECONCILE_DEADLINE_MS, then TokengateUnknownOutcomePastDeadline fires at once, and not before (promtool test rules)', () => {
    // The deadline is 600 s; the oldest unknown outcome ages a minute a minute from 0, on two pods.
    const age = (pod: string) => ({ series: `tokengate_unknown_outcomes_oldest_age_seconds{namespace="ns",pod="${pod}"}`, values: '0+60x20' });
    const deadline = (pod: string) => ({ series: `tokengate_reconcile_deadline_seconds{namespace="ns",pod="${pod}"}`, values: '600+0x20' });
    const { ok, output } = promtoolTest(ruleGroups(), {
      evaluation_interval: '1m',
      tests: [{
        interval: '1m',
        input_series: [age('a'), age('b'), deadline('a'), deadline('b')],
        alert_rule_test: [
          { eval_time: '10m', alertname: 'TokengateUnknownOutcomePastDeadline', exp_alerts: [] },
          { eval_time: '11m', alertname: 'TokengateUnknownOutcomePastDeadline', exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'ns' }, exp_annotations: {
            runbook_url: 'docs/runbooks/TokengateUnknownOutcomePastDeadline.md',
            summary: 'An unknown outcome is past RECONCILE_DEADLINE_MS (11m 0s old)',
            description: 'The reconciler cannot decide it from the gateway\'s records. Look it up in the gateway\'s console, then settle it on the admin port (POST /unknown-outcomes/settle).',
          } }] },
        ],
      }],
    });
    expect(output).toContain('SUCCESS');
    expect(ok).toBe(true);
  });

  itWithPromtool('when a settlement keeps a line that is not matched, then TokengateSettlementMismatch fires for that verdict; matched lines alone never fire it (promtool test rules)', () => {
    const lines = (verdict: string, values: string) => ({ series: `tokengate_settlement_lines_total{namespace="ns",pod="a",verdict="${verdict}"}`, values });
    const { ok, output } = promtoolTest(ruleGroups(), {
      evaluation_interval: '1m',
      tests: [{
        interval: '1m',
        // Matched lines climb all along; two not_ours lines are kept at minute 10.
        input_series: [lines('matched', '0+5x20'), lines('not_ours', '0x9 2+0x10')],
        alert_rule_test: [
          { eval_time: '9m', alertname: 'TokengateSettlementMismatch', exp_alerts: [] },
          { eval_time: '12m', alertname: 'TokengateSettlementMismatch', exp_alerts: [{ exp_labels: { severity: 'warning', namespace: 'ns', verdict: 'not_ours' }, exp_annotations: {
            runbook_url: 'docs/runbooks/TokengateSettlementMismatch.md',
            summary: '2 settlement lines were not_ours in the last day',
            description: 'A batch the gateway closed holds lines tokengate\'s records do not match. GET /v1/settlements lists the batches with counts by verdict; GET /v1/settlements/{batch} (or its CSV) the lines. docs/settlements.md says what each verdict means and what to do.',
          } }] },
        ],
      }],
    });
    expect(output).toContain('SUCCESS');
    expect(ok).toBe(true);
  });

  itWithPromtool('when a payment event is given up after its last retry, then TokengateEventsUndelivered fires for that destination (promtool test rules)', () => {
    const series = (destination: string, pod: string, values: string) => ({ series: `tokengate_events_undelivered_total{namespace="ns",destination="${destination}",pod="${pod}"}`, values });
    const { ok, output } = promtoolTest(ruleGroups(), {
      evaluation_interval: '1m',
      tests: [{
        interval: '1m',
        // One event to the orders service given up at minute 30 (on pod b); the ledger's receiver is healthy.
        input_series: [series('http://orders/hooks', 'a', '0+0x60'), series('http://orders/hooks', 'b', '0+0x29 1+0x30'), series('http://ledger/hooks', 'a', '0+0x60')],
        alert_rule_test: [
          { eval_time: '20m', alertname: 'TokengateEventsUndelivered', exp_alerts: [] },
          { eval_time: '40m', alertname: 'TokengateEventsUndelivered', exp_alerts: [{ exp_labels: { severity: 'critical', namespace: 'ns', destination: 'http://orders/hooks' }, exp_annotations: {
            runbook_url: 'docs/runbooks/TokengateEventsUndelivered.md',
            summary: '1 payment events to http://orders/hooks were given up in the last hour',
            description: 'The receiver answered no 2xx within 15 s on every attempt of the retry schedule. Fix it, then let it catch up with GET /v1/events?after=<the last event id it processed>.',
          } }] },
        ],
      }],
    });
    expect(output).toContain('SUCCESS');
    expect(ok).toBe(true);
  });

  it('when the rules are read, then the alerts exist with a severity, a summary, a runbook and a valid duration', () => {
    const rules = ruleGroups().groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert).sort()).toEqual([...ALERTS].sort());
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({ alert: rule.alert, severity: expect.stringMatching(/^(warning|critical)$/) });
      expect(rule.annotations?.summary).toEqual(expect.any(String));
      expect(rule.annotations?.runbook_url).toBe(`docs/runbooks/${rule.alert}.md`);
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(rule.expr).toMatch(/\btokengate_/);
    }
  });

  it('when the runbooks are read, then every alert opens its page (meaning, impact, diagnosis, mitigation), every page belongs to an alert, and docs/deploy.md links each', () => {
    expect(docsCheck.runbookProblems()).toEqual([]);
    const pages = readdirSync(path.join(ROOT, 'docs', 'runbooks')).sort();
    expect(pages).toEqual(ALERTS.map((alert) => `${alert}.md`).sort());
    const doc = readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8');
    expect(ALERTS.filter((alert) => !doc.includes(`[\`${alert}\`](runbooks/${alert}.md)`))).toEqual([]);
    expect(doc).toContain('components/monitoring');
  });

  it('when an alert is added without a page, a runbook_url drifts, or a page names no alert, then the check (npm run lint) names each', () => {
    const rules = docsCheck.alertRules();
    const drifted = rules.map((r) => (r.alert === 'TokengateSalesErrorRate' ? { ...r, runbookUrl: 'docs/deploy.md' } : r));
    expect(docsCheck.runbookProblems([...drifted, { alert: 'TokengateNewAlert', runbookUrl: 'docs/runbooks/TokengateNewAlert.md' }])).toEqual([
      'TokengateSalesErrorRate: runbook_url is "docs/deploy.md", not "docs/runbooks/TokengateSalesErrorRate.md"',
      'TokengateNewAlert: docs/runbooks/TokengateNewAlert.md does not exist',
    ]);
    expect(docsCheck.runbookProblems(rules.filter((r) => r.alert !== 'TokengateUpstream429'))).toEqual(['docs/runbooks/TokengateUpstream429.md: names no alert of k8s/components/monitoring/prometheusrule.yaml']);
  });

  it('when the dashboard ConfigMap is rendered, then the Grafana sidecar label is set and the JSON is a dashboard with unique, non-overlapping panels', () => {
    const cm = find<{ metadata: { labels?: Record<string, string> }; data: Record<string, string> }>(objects, 'ConfigMap', 'tokengate-grafana-dashboard');
    expect(cm.metadata.labels?.grafana_dashboard).toBe('1');
    expect(Object.keys(cm.data)).toEqual(['tokengate.json']);
    const rendered = JSON.parse(cm.data['tokengate.json'] as string) as ReturnType<typeof dashboard>;
    expect(rendered).toEqual(dashboard());
    expect(rendered.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    const ids = rendered.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of rendered.panels) {
      expect(p.targets.length).toBeGreaterThan(0);
      for (const t of p.targets) expect(t.expr).toMatch(/\btokengate_/);
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
    }
    const overlaps = (a: DashboardPanel, b: DashboardPanel) =>
      a.gridPos.x < b.gridPos.x + b.gridPos.w && b.gridPos.x < a.gridPos.x + a.gridPos.w && a.gridPos.y < b.gridPos.y + b.gridPos.h && b.gridPos.y < a.gridPos.y + a.gridPos.h;
    const pairs = rendered.panels.flatMap((a, i) => rendered.panels.slice(i + 1).filter((b) => overlaps(a, b)).map((b) => `${a.title} / ${b.title}`));
    expect(pairs).toEqual([]);
  });

  it('when the expressions are read, then every metric they name is matched by the /metrics check (helper sanity)', () => {
    const names = monitoringMetricNames();
    expect(names).toEqual(expect.arrayContaining(['tokengate_redis_up', 'tokengate_limiter_upstream_429_total', 'tokengate_limiter_queue_wait_seconds_bucket', 'tokengate_unknown_outcomes_oldest_age_seconds']));
    const exposition = '# TYPE tokengate_a_seconds histogram\n# TYPE tokengate_b gauge\n';
    expect([exposes(exposition, 'tokengate_a_seconds_bucket'), exposes(exposition, 'tokengate_b'), exposes(exposition, 'tokengate_b_bucket'), exposes(exposition, 'tokengate_c')]).toEqual([true, true, false, false]);
  });
});


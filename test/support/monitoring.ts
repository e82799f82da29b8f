import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** k8s/components/monitoring, read as files (the k8s suites render it with kubectl kustomize as well). */
export const MONITORING_DIR = path.join(__dirname, '..', '..', 'k8s', 'components', 'monitoring');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroups {
  groups: { name: string; rules: AlertRule[] }[];
}
export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: { refId: string; expr: string }[];
}
export interface Dashboard {
  uid: string;
  title: string;
  panels: DashboardPanel[];
  templating: { list: { name: string; query: unknown }[] };
}

/** The PrometheusRule's spec: the same `groups:` document `promtool check rules` reads. */
export function ruleGroups(): RuleGroups {
  const rule = parse(readFileSync(path.join(MONITORING_DIR, 'prometheusrule.yaml'), 'utf8')) as { spec: RuleGroups };
  return rule.spec;
}

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(path.join(MONITORING_DIR, 'dashboard.json'), 'utf8')) as Dashboard;
}

/** Every PromQL expression the alerts and the dashboard (panels and variables) evaluate. */
export function monitoringExpressions(): string[] {
  const rules = ruleGroups().groups.flatMap((g) => g.rules.map((r) => r.expr));
  const dash = dashboard();
  const panels = dash.panels.flatMap((p) => p.targets.map((t) => t.expr));
  const variables = dash.templating.list.map((v) => JSON.stringify(v.query));
  return [...rules, ...panels, ...variables];
}

/** The tokengate_* series names those expressions read (histogram series as written: `_bucket`, `_count`). */
export function monitoringMetricNames(): string[] {
  return [...new Set(monitoringExpressions().flatMap((e) => e.match(/\btokengate_[a-z0-9_]+/g) ?? []))].sort();
}

/**
 * Whether Prometheus text exposition declares `name`: its own `# TYPE` line, or the histogram it belongs to
 * (prom-client prints a labelled histogram's `_bucket` series only once observed; the TYPE line always).
 */
export function exposes(exposition: string, name: string): boolean {
  const declared = (n: string, type?: string) => new RegExp(`^# TYPE ${n} ${type ?? '\\w+'}$`, 'm').test(exposition);
  if (declared(name)) return true;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  return base !== undefined && declared(base, 'histogram');
}

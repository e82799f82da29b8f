import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';

/** Rendering and schema validation of k8s/ for the packaging tests (shared by packaging-*.test.ts). */

export const ROOT = path.resolve(__dirname, '..', '..');
export const K8S = path.join(ROOT, 'k8s');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const KUBECTL_HELP =
  'kubectl >= 1.27 (bundling kustomize v5) is required to render k8s/. It is part of the machine image ' +
  '(/usr/bin/kubectl, Debian package `kubectl` from the Kubernetes/Google Cloud apt repository); Debian\'s own ' +
  '`kubernetes-client` is too old (kustomize v2). Install it from https://kubernetes.io/docs/tasks/tools/ and re-run.';

function kustomize(dir: string, label: string): string {
  try {
    return execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error(KUBECTL_HELP, { cause: err });
    throw new Error(`kubectl kustomize ${label} failed: ${e.stderr ?? e.message}`, { cause: err });
  }
}

/** `kubectl kustomize <dir>`; a missing kubectl fails with how to install it rather than a bare ENOENT. */
export function render(relativeDir: string): string {
  return kustomize(path.join(K8S, relativeDir), `k8s/${relativeDir}`);
}

/**
 * Renders k8s/<tree> with k8s/<component>s included, as an overlay's `components:` would, through a throwaway
 * kustomization in a temporary directory (kustomize refuses absolute paths, so they are relative to it).
 */
export function renderWithComponents(tree: string, components: string[]): K8sObject[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-kustomize-'));
  const rel = (p: string) => path.relative(dir, path.join(K8S, p));
  const label = `k8s/${tree} + ${components.map((c) => `k8s/${c}`).join(' + ')}`;
  try {
    writeFileSync(
      path.join(dir, 'kustomization.yaml'),
      ['apiVersion: kustomize.config.k8s.io/v1beta1', 'kind: Kustomization', 'resources:', `  - ${rel(tree)}`, 'components:', ...components.map((c) => `  - ${rel(c)}`), ''].join('\n'),
    );
    return parseStream(kustomize(dir, label), label);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Parses a YAML stream; any YAML error fails (a half-parsed manifest would hide objects). */
export function parseStream(text: string, source: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${source}: a document is not a mapping`);
    const o = value as Partial<K8sObject>;
    if (typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') {
      throw new Error(`${source}: a document lacks apiVersion, kind or metadata.name`);
    }
    objects.push(o as K8sObject);
  }
  return objects;
}

export function renderObjects(relativeDir: string): K8sObject[] {
  return parseStream(render(relativeDir), `k8s/${relativeDir}`);
}

export function readObjects(relativeFile: string): K8sObject[] {
  return parseStream(readFileSync(path.join(K8S, relativeFile), 'utf8'), `k8s/${relativeFile}`);
}

// The kinds this project ships. A new kind must be added here, so nothing escapes schema validation.
type ModelClass = new (data: never) => { validate(): void };
const MODELS: Record<string, ModelClass> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/** Validates one object against its Kubernetes schema; returns problems (empty when valid). */
export function schemaProblems(o: K8sObject): string[] {
  const Model = MODELS[`${o.apiVersion}/${o.kind}`];
  const where = `${o.kind}/${o.metadata.name}`;
  if (!Model) return [`${where}: unknown apiVersion/kind ${o.apiVersion} ${o.kind} (add its kubernetes-models class)`];
  try {
    new Model(o as never).validate();
    return [];
  } catch (err) {
    return [`${where}: ${(err as Error).message}`];
  }
}

export function byKind<T>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

export function find<T>(objects: K8sObject[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in the rendered manifests`);
  return found as unknown as T;
}

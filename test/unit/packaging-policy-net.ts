import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { INetworkPolicyEgressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyEgressRule';
import type { INetworkPolicyPort } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPort';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IService } from 'kubernetes-models/v1/Service';
import { byKind, find, type K8sObject } from './packaging-k8s';
import { configMaps, podSpec, SERVICE } from './packaging-policy';

/** Network, scaling and per-overlay rules (issue 5, item 2); each returns violations, like packaging-policy.ts. */

const SANDBOX = 'tokengate-sandbox';

function labelsMatch(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

/** A TCP port or inclusive range (port..endPort), as one NetworkPolicy port entry opens it. */
export type PortRange = readonly [number, number];

/**
 * Redis egress as docs/deploy.md ("Network") documents it: the base opens 6379 and 6380 (rediss://, the usual
 * managed-Redis TLS port); each component under k8s/components/ adds its ports when an overlay includes it.
 * The cluster bus (data port + 10000) is never opened: only Redis nodes talk on it, clients never do.
 */
export const REDIS_BASE_PORTS: readonly PortRange[] = [[6379, 6379], [6380, 6380]];
export const REDIS_COMPONENT_PORTS: Readonly<Record<string, readonly PortRange[]>> = {
  'redis-sentinel': [[26379, 26379]],
  'redis-cluster': [[7000, 7005]],
};
const REDIS_DOCUMENTED: readonly PortRange[] = [...REDIS_BASE_PORTS, ...Object.values(REDIS_COMPONENT_PORTS).flat()];

const showRange = ([from, to]: PortRange): string => (from === to ? `TCP ${from}` : `TCP ${from}-${to}`);
const within = ([from, to]: PortRange, [lo, hi]: PortRange): boolean => from >= lo && to <= hi;

/** The egress entries for DNS (to kube-dns), the gateway (443) and the in-namespace emulator (8081); the rest is Redis. */
function isNonRedisEgress(rule: INetworkPolicyEgressRule, p: INetworkPolicyPort): boolean {
  const to = rule.to ?? [];
  const toDns = to.length > 0 && to.every((t) => t.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns');
  const toSandbox = to.length > 0 && to.every((t) => t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === SANDBOX && !t.namespaceSelector);
  if (p.endPort !== undefined) return false;
  return (p.port === 53 && toDns) || (p.port === 443 && (p.protocol ?? 'TCP') === 'TCP') || (p.port === 8081 && toSandbox);
}

/** The egress rules that are not Redis (DNS, gateway, emulator), so a test can see that they stay as they were. */
export function nonRedisEgress(np: INetworkPolicy): INetworkPolicyEgressRule[] {
  return (np.spec?.egress ?? []).filter((r) => (r.ports ?? []).some((p) => isNonRedisEgress(r, p)));
}

/** Every other egress port entry, as a range; a named (string) port or another protocol shows as NaN (never documented). */
function redisEgressPorts(np: INetworkPolicy): PortRange[] {
  return (np.spec?.egress ?? []).flatMap((r) =>
    (r.ports ?? [])
      .filter((p) => !isNonRedisEgress(r, p))
      .map((p): PortRange => {
        const port = typeof p.port === 'number' && (p.protocol ?? 'TCP') === 'TCP' ? p.port : NaN;
        return [port, p.endPort ?? port];
      }),
  );
}

/** The Redis egress is exactly `expected` (the base ports, plus those of the components the tree includes). */
export function redisPortProblems(np: INetworkPolicy, expected: readonly PortRange[]): string[] {
  const where = `NetworkPolicy/${np.metadata?.name}`;
  const open = redisEgressPorts(np).map(showRange);
  const want = expected.map(showRange);
  return [
    ...want.filter((w) => !open.includes(w)).map((w) => `${where}: Redis egress lacks ${w}`),
    ...open.filter((o) => !want.includes(o)).map((o) => `${where}: egress opens ${o}, not one of the Redis ports expected here (${want.join(', ')})`),
  ];
}

/** docs/deploy.md names every Redis port the manifests open, and every component with the path to include it. */
export function redisDocProblems(doc: string): string[] {
  const ports = [...new Set(REDIS_DOCUMENTED.flat())].filter((port) => !new RegExp(`\\b${port}\\b`).test(doc));
  const components = Object.keys(REDIS_COMPONENT_PORTS).filter((c) => !doc.includes(`components/${c}`));
  return [...ports.map((port) => `docs/deploy.md does not mention Redis port ${port}`), ...components.map((c) => `docs/deploy.md does not name components/${c}`)];
}

function config(objects: K8sObject[], key: string): string | undefined {
  return configMaps(objects).map((cm) => cm.data?.[key]).find((v) => v !== undefined);
}

/** The Service: port http → the public port, admin → the admin port. */
export function servicePortProblems(svc: IService): string[] {
  const ports = new Map((svc.spec?.ports ?? []).map((p) => [p.name, p.targetPort]));
  const out: string[] = [];
  if (!['http', 8080].includes(ports.get('http') ?? '')) out.push('Service/tokengate: port http does not target 8080');
  if (!['admin', 9090].includes(ports.get('admin') ?? '')) out.push('Service/tokengate: port admin does not target 9090');
  return out;
}

/** Every Deployment's pods are selected by a NetworkPolicy that restricts both directions. */
export function coverageProblems(objects: K8sObject[]): string[] {
  const policies = byKind<INetworkPolicy>(objects, 'NetworkPolicy');
  return byKind<IDeployment>(objects, 'Deployment')
    .filter((d) => {
      const labels = d.spec?.template.metadata?.labels ?? {};
      return !policies.some((np) => labelsMatch(np.spec?.podSelector.matchLabels, labels) && (['Ingress', 'Egress'] as const).every((t) => np.spec?.policyTypes?.includes(t)));
    })
    .map((d) => `Deployment/${d.metadata?.name}: no NetworkPolicy restricts both ingress and egress`);
}

/** tokengate: 8080 from the ingress controller and labelled namespaces, 9090 from monitoring; egress to DNS, documented Redis ports, 443. */
export function serviceNetworkProblems(np: INetworkPolicy): string[] {
  const out: string[] = [];
  const where = `NetworkPolicy/${np.metadata?.name}`;
  const sources = (port: number) =>
    (np.spec?.ingress ?? []).filter((r) => (r.ports ?? []).some((p) => p.port === port)).flatMap((r) => (r.from ?? []).map((f) => f.namespaceSelector?.matchLabels ?? {}));
  for (const rule of np.spec?.ingress ?? []) {
    if (!rule.from?.length) out.push(`${where}: an ingress rule admits every source`);
    if (!rule.ports?.length) out.push(`${where}: an ingress rule admits every port`);
    for (const p of rule.ports ?? []) if (p.port !== 8080 && p.port !== 9090) out.push(`${where}: ingress to port ${p.port}`);
  }
  const api = sources(8080);
  if (!api.some((l) => l['kubernetes.io/metadata.name'] === 'ingress-nginx')) out.push(`${where}: 8080 not open to the ingress controller namespace`);
  if (!api.some((l) => l['tokengate.io/client'] === 'true')) out.push(`${where}: 8080 not open to namespaces labelled tokengate.io/client`);
  if (!sources(9090).some((l) => l['kubernetes.io/metadata.name'] === 'monitoring')) out.push(`${where}: 9090 not open to the monitoring namespace`);
  if (sources(9090).some((l) => l['tokengate.io/client'] === 'true')) out.push(`${where}: the admin port is open to clients`);

  for (const rule of np.spec?.egress ?? []) {
    if (!rule.ports?.length) out.push(`${where}: an egress rule allows every port`);
  }
  // Whatever is not DNS, the gateway or the emulator must be a documented Redis port, and never a cluster bus port.
  const buses = REDIS_DOCUMENTED.map(([from, to]): PortRange => [from + 10_000, to + 10_000]);
  for (const range of redisEgressPorts(np)) {
    if (!REDIS_DOCUMENTED.some((doc) => within(range, doc))) {
      out.push(`${where}: egress to ${Number.isNaN(range[0]) ? 'a named or non-TCP port' : showRange(range)} is not DNS (kube-dns), a documented Redis port, the gateway (443) or the in-namespace emulator`);
    }
    if (buses.some(([lo, hi]) => range[0] <= hi && range[1] >= lo)) out.push(`${where}: egress to ${showRange(range)} opens a Redis cluster bus port (clients never use it)`);
  }
  return out;
}

/** PDB and HPA (autoscaling/v2) target tokengate; a drain can always evict one; the HPA alone owns replicas. */
export function scalingProblems(objects: K8sObject[]): string[] {
  const out: string[] = [];
  const hpa = byKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler').find((h) => h.spec?.scaleTargetRef.name === SERVICE);
  const pdb = byKind<IPodDisruptionBudget>(objects, 'PodDisruptionBudget').find((p) => p.spec?.selector?.matchLabels?.['app.kubernetes.io/name'] === SERVICE);
  const deployment = find<IDeployment>(objects, 'Deployment', SERVICE);
  if (!hpa || hpa.apiVersion !== 'autoscaling/v2' || hpa.spec?.scaleTargetRef.kind !== 'Deployment') out.push('no autoscaling/v2 HorizontalPodAutoscaler for Deployment/tokengate');
  if (!pdb) out.push('no PodDisruptionBudget for tokengate');
  if (deployment.spec?.replicas !== undefined) out.push('Deployment/tokengate sets replicas: every apply would reset the HPA');
  if (hpa?.spec && pdb?.spec) {
    const min = hpa.spec.minReplicas ?? 1;
    const available = pdb.spec.minAvailable;
    if (typeof available !== 'number' || available >= min) out.push(`PodDisruptionBudget minAvailable ${String(available)} must be a number below the HPA minimum ${min}`);
    // When Redis is down each replica reads with budget / LIMITER_EXPECTED_REPLICAS: more pods would overspend.
    const expected = Number(config(objects, 'LIMITER_EXPECTED_REPLICAS'));
    if (!(expected >= hpa.spec.maxReplicas)) out.push(`LIMITER_EXPECTED_REPLICAS ${expected} is below the HPA maxReplicas ${hpa.spec.maxReplicas}`);
  }
  return out;
}

/** Production: 3+ replicas spread over zones and nodes, TLS at the Ingress, https gateway, JWT key file. */
export function productionProblems(objects: K8sObject[]): string[] {
  const out: string[] = [];
  const hpa = byKind<IHorizontalPodAutoscaler>(objects, 'HorizontalPodAutoscaler').find((h) => h.spec?.scaleTargetRef.name === SERVICE);
  if ((hpa?.spec?.minReplicas ?? 1) < 3) out.push('production runs fewer than 3 replicas');
  const spec = podSpec(find<IDeployment>(objects, 'Deployment', SERVICE));
  for (const key of ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']) {
    const c = (spec.topologySpreadConstraints ?? []).find((t) => t.topologyKey === key);
    if (!c || c.labelSelector?.matchLabels?.['app.kubernetes.io/name'] !== SERVICE) out.push(`no topology spread of tokengate pods over ${key}`);
  }
  const ingresses = byKind<IIngress>(objects, 'Ingress');
  if (ingresses.length === 0) out.push('no Ingress');
  for (const ing of ingresses) {
    const tlsHosts = (ing.spec?.tls ?? []).filter((t) => t.secretName).flatMap((t) => t.hosts ?? []);
    for (const rule of ing.spec?.rules ?? []) {
      if (!rule.host || !tlsHosts.includes(rule.host)) out.push(`Ingress/${ing.metadata?.name}: host ${rule.host ?? '*'} is not covered by TLS`);
      for (const p of rule.http?.paths ?? []) {
        const svc = p.backend.service;
        if (svc?.name !== SERVICE || (svc.port?.name !== 'http' && svc.port?.number !== 80)) out.push(`Ingress/${ing.metadata?.name}: a path does not route to tokengate's http port`);
      }
    }
  }
  if (!config(objects, 'GATEWAY_BASE_URL')?.startsWith('https://')) out.push('production GATEWAY_BASE_URL is not https');
  if (config(objects, 'GATEWAY_ALLOW_INSECURE') === 'true') out.push('production allows an insecure gateway');
  const env = new Set((spec.containers.find((c) => c.name === SERVICE)?.env ?? []).map((e) => e.name));
  if (!env.has('JWT_PUBLIC_KEY_FILE') && !env.has('JWT_SECRET_FILE') && !config(objects, 'JWT_JWKS_URL')) out.push('production has no JWT key');
  return out;
}

/** Sandbox: the emulator (same image, sandbox command) behind its Service, and a hardened throwaway Redis. */
export function sandboxProblems(objects: K8sObject[]): string[] {
  const out: string[] = [];
  const service = podSpec(find<IDeployment>(objects, 'Deployment', SERVICE)).containers.find((c) => c.name === SERVICE);
  const emulator = podSpec(find<IDeployment>(objects, 'Deployment', SANDBOX)).containers[0];
  if (emulator?.command?.join(' ') !== 'node dist/sandbox/main.js') out.push('the emulator does not run node dist/sandbox/main.js');
  if (emulator?.image !== service?.image) out.push('the emulator does not run the service image');
  const svc = find<IService>(objects, 'Service', SANDBOX);
  const port = svc.spec?.ports?.[0]?.port;
  if (config(objects, 'GATEWAY_BASE_URL') !== `http://${SANDBOX}:${port}/api/v2/`) out.push('GATEWAY_BASE_URL does not point at the emulator Service');
  if (config(objects, 'GATEWAY_ALLOW_INSECURE') !== 'true') out.push('GATEWAY_ALLOW_INSECURE is not true for the in-cluster http emulator');

  const redisSpec = podSpec(find<IDeployment>(objects, 'Deployment', 'redis'));
  const redis = redisSpec.containers[0];
  const args = redis?.args ?? [];
  const save = args.indexOf('--save');
  if (save < 0 || args[save + 1] !== '') out.push('redis persists (no --save "")');
  const data = redis?.volumeMounts?.find((m) => m.mountPath === '/data');
  if (!data || !redisSpec.volumes?.some((v) => v.name === data.name && v.emptyDir)) out.push('redis /data is not an emptyDir');
  const np = find<INetworkPolicy>(objects, 'NetworkPolicy', 'redis');
  const from = (np.spec?.ingress ?? []).flatMap((r) => r.from ?? []);
  if (from.length === 0 || !from.every((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/name'] === SERVICE && !f.namespaceSelector)) out.push('redis is reachable by more than tokengate');
  return out;
}

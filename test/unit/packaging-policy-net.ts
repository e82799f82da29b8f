import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IService } from 'kubernetes-models/v1/Service';
import { byKind, find, type K8sObject } from './packaging-k8s';
import { configMaps, podSpec, SERVICE } from './packaging-policy';

/** Network, scaling and per-overlay rules (issue 5, item 2); each returns violations, like packaging-policy.ts. */

const SANDBOX = 'tokengate-sandbox';

function labelsMatch(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
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

/** tokengate: 8080 from the ingress controller and labelled namespaces, 9090 from monitoring; egress to DNS, Redis, 443. */
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
    for (const p of rule.ports ?? []) {
      const proto = p.protocol ?? 'TCP';
      const toDns = (rule.to ?? []).length > 0 && (rule.to ?? []).every((t) => t.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns');
      const toSandbox = (rule.to ?? []).length > 0 && (rule.to ?? []).every((t) => t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === SANDBOX && !t.namespaceSelector);
      const ok = (p.port === 53 && toDns) || (p.port === 6379 && proto === 'TCP') || (p.port === 443 && proto === 'TCP') || (p.port === 8081 && toSandbox);
      if (!ok) out.push(`${where}: egress to ${proto} ${p.port} is not DNS (kube-dns), Redis, the gateway (443) or the in-namespace emulator`);
    }
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

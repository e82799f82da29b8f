import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { IServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { byKind, type K8sObject } from './packaging-k8s';

/**
 * Our own rules for the rendered manifests (issue 5, item 2), beyond what the schemas say. Every check
 * returns a list of violations, so a test can also run it on a deliberately broken copy and see it fail.
 */

export const SERVICE = 'tokengate';
const GATEWAY_TIMEOUT_SEC_DEFAULT = 45;

/** Env names that hold credentials: they may only come from a Secret (secretKeyRef) or a *_FILE mount. */
const SECRET_ENV = /(^|_)(PIN|KEY|SECRET|PASSWORD|TOKEN)$|^REDIS_URL$/;
/** Settings named like credentials that are not: the merchant's `merch_key` is in every webhook the gateway sends. */
const NOT_CREDENTIALS = new Set(['GATEWAY_MERCHANT_KEY']);
const isCredential = (name: string): boolean => SECRET_ENV.test(name) && !NOT_CREDENTIALS.has(name);

function containersOf(spec: IPodSpec): { c: IContainer; init: boolean }[] {
  return [...(spec.initContainers ?? []).map((c) => ({ c, init: true })), ...spec.containers.map((c) => ({ c, init: false }))];
}

export function podSpec(d: IDeployment): IPodSpec {
  const spec = d.spec?.template.spec;
  if (!spec) throw new Error(`Deployment/${d.metadata?.name} has no pod spec`);
  return spec;
}

export function imageProblems(image: string | undefined, where: string): string[] {
  if (!image) return [`${where}: no image`];
  if (image.includes('@sha256:')) return [];
  const tag = /:([^/:]+)$/.exec(image)?.[1];
  if (!tag) return [`${where}: image ${image} is untagged`];
  if (tag === 'latest') return [`${where}: image ${image} uses latest`];
  return [];
}

/** Security context, resources, image, probes and the /tmp emptyDir, for every container incl. init ones. */
export function containerProblems(spec: IPodSpec, owner: string): string[] {
  const out: string[] = [];
  const emptyDirs = new Set((spec.volumes ?? []).filter((v) => v.emptyDir).map((v) => v.name));
  for (const { c, init } of containersOf(spec)) {
    const where = `${owner}/${c.name}`;
    const sc = c.securityContext ?? {};
    if (sc.runAsNonRoot !== true) out.push(`${where}: securityContext.runAsNonRoot is not true`);
    if (typeof sc.runAsUser !== 'number' || sc.runAsUser === 0) out.push(`${where}: securityContext.runAsUser is not a non-zero UID`);
    if (sc.readOnlyRootFilesystem !== true) out.push(`${where}: securityContext.readOnlyRootFilesystem is not true`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${where}: securityContext.allowPrivilegeEscalation is not false`);
    if (sc.privileged === true) out.push(`${where}: privileged`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${where}: capabilities do not drop ALL`);
    if ((sc.capabilities?.add ?? []).length > 0) out.push(`${where}: capabilities are added`);
    if (sc.seccompProfile?.type !== 'RuntimeDefault') out.push(`${where}: seccompProfile is not RuntimeDefault`);
    for (const kind of ['requests', 'limits'] as const) {
      for (const resource of ['cpu', 'memory']) {
        if (c.resources?.[kind]?.[resource] === undefined) out.push(`${where}: no ${resource} ${kind}`);
      }
    }
    out.push(...imageProblems(c.image, where));
    if (!init && !c.readinessProbe) out.push(`${where}: no readinessProbe`);
    if (!init && !c.livenessProbe) out.push(`${where}: no livenessProbe`);
    const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
    if (!tmp || !emptyDirs.has(tmp.name)) out.push(`${where}: no emptyDir mounted at /tmp`);
  }
  if (spec.automountServiceAccountToken !== false) out.push(`${owner}: automountServiceAccountToken is not false`);
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push(`${owner}: uses a host namespace`);
  return out;
}

/** Credentials: never literal env values; `*_FILE` paths must lie in a volume backed by a Secret. */
export function secretProblems(spec: IPodSpec, configMaps: IConfigMap[], owner: string): string[] {
  const out: string[] = [];
  const secretVolumes = new Set((spec.volumes ?? []).filter((v) => v.secret?.secretName).map((v) => v.name));
  for (const { c } of containersOf(spec)) {
    const secretDirs = (c.volumeMounts ?? []).filter((m) => secretVolumes.has(m.name)).map((m) => `${m.mountPath.replace(/\/$/, '')}/`);
    for (const e of c.env ?? []) {
      const where = `${owner}/${c.name} env ${e.name}`;
      if (e.name.endsWith('_FILE') && SECRET_ENV.test(e.name.slice(0, -5))) {
        if (!e.value || !secretDirs.some((dir) => e.value?.startsWith(dir))) out.push(`${where}: not a path inside a mounted Secret`);
      } else if (isCredential(e.name) && !e.valueFrom?.secretKeyRef) {
        out.push(`${where}: a credential not taken from a Secret (secretKeyRef)`);
      }
    }
  }
  for (const cm of configMaps) {
    for (const key of Object.keys(cm.data ?? {})) {
      if (isCredential(key)) out.push(`ConfigMap/${cm.metadata?.name}: holds the credential ${key}`);
    }
  }
  return out;
}

function httpProbe(p: IProbe | undefined, path: string, where: string): string[] {
  const get = p?.httpGet;
  if (!get) return [`${where}: not an httpGet probe`];
  const onAdmin = get.port === 'admin' || get.port === 9090;
  return [...(get.path === path ? [] : [`${where}: path ${get.path} is not ${path}`]), ...(onAdmin ? [] : [`${where}: not on the admin port`])];
}

function configValue(configMaps: IConfigMap[], key: string): string | undefined {
  return configMaps.map((cm) => cm.data?.[key]).find((v) => v !== undefined);
}

/** The service container: ports, probes on the admin port, credentials as files, a graceful stop. */
export function serviceProblems(d: IDeployment, configMaps: IConfigMap[]): string[] {
  const spec = podSpec(d);
  const c = spec.containers.find((x) => x.name === SERVICE);
  if (!c) return [`Deployment/${SERVICE}: no ${SERVICE} container`];
  const where = `Deployment/${SERVICE}/${SERVICE}`;
  const out: string[] = [];
  const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
  if (ports.get('http') !== 8080) out.push(`${where}: no port http 8080`);
  if (ports.get('admin') !== 9090) out.push(`${where}: no port admin 9090`);
  out.push(...httpProbe(c.readinessProbe, '/readyz', `${where} readinessProbe`));
  out.push(...httpProbe(c.livenessProbe, '/healthz', `${where} livenessProbe`));
  const env = new Set((c.env ?? []).map((e) => e.name));
  for (const name of ['GATEWAY_API_KEY_FILE', 'GATEWAY_API_PIN_FILE', 'REDIS_URL_FILE']) {
    if (!env.has(name)) out.push(`${where}: no ${name}`);
  }
  const preStop = c.lifecycle?.preStop;
  const pause = preStop?.sleep?.seconds ?? (preStop?.exec ? 5 : undefined);
  if (pause === undefined || pause < 1) out.push(`${where}: no preStop pause`);
  const timeoutSec = Number(configValue(configMaps, 'GATEWAY_TIMEOUT_MS') ?? GATEWAY_TIMEOUT_SEC_DEFAULT * 1000) / 1000;
  const grace = spec.terminationGracePeriodSeconds ?? 30;
  if (grace <= timeoutSec + (pause ?? 0)) out.push(`${where}: terminationGracePeriodSeconds ${grace} does not cover preStop + the ${timeoutSec} s gateway timeout`);
  if (!spec.serviceAccountName) out.push(`${where}: no dedicated serviceAccountName`);
  return out;
}

/** Every ServiceAccount keeps its token unmounted, and every pod names one that exists. */
export function serviceAccountProblems(objects: K8sObject[]): string[] {
  const accounts = byKind<IServiceAccount>(objects, 'ServiceAccount');
  const out = accounts.filter((sa) => sa.automountServiceAccountToken !== false).map((sa) => `ServiceAccount/${sa.metadata?.name}: token automount is not off`);
  for (const d of byKind<IDeployment>(objects, 'Deployment')) {
    const name = podSpec(d).serviceAccountName;
    if (name && !accounts.some((sa) => sa.metadata?.name === name)) out.push(`Deployment/${d.metadata?.name}: ServiceAccount ${name} is not in the manifests`);
  }
  return out;
}

export function configMaps(objects: K8sObject[]): IConfigMap[] {
  return byKind<IConfigMap>(objects, 'ConfigMap');
}

/** Every pod of every Deployment passes the container, secret and service-account rules. */
export function workloadProblems(objects: K8sObject[]): string[] {
  const cms = configMaps(objects);
  const out: string[] = [];
  for (const d of byKind<IDeployment>(objects, 'Deployment')) {
    const owner = `Deployment/${d.metadata?.name}`;
    out.push(...containerProblems(podSpec(d), owner), ...secretProblems(podSpec(d), cms, owner));
    if (d.metadata?.name === SERVICE) out.push(...serviceProblems(d, cms));
  }
  return [...out, ...serviceAccountProblems(objects)];
}

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IService } from 'kubernetes-models/v1/Service';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { byKind, find, K8S, readObjects, renderObjects, renderWithComponents, ROOT, schemaProblems, type K8sObject } from './packaging-k8s';
import { configMaps, containerProblems, podSpec, secretProblems, SERVICE, serviceProblems, workloadProblems } from './packaging-policy';
import {
  coverageProblems,
  nonRedisEgress,
  productionProblems,
  REDIS_BASE_PORTS,
  REDIS_COMPONENT_PORTS,
  redisDocProblems,
  redisPortProblems,
  sandboxProblems,
  scalingProblems,
  servicePortProblems,
  serviceNetworkProblems,
} from './packaging-policy-net';

// Rendered once: `kubectl kustomize` takes ~0.2 s per tree.
const TREES = ['base', 'overlays/sandbox', 'overlays/production'] as const;
const rendered = new Map<string, K8sObject[]>(TREES.map((t) => [t, renderObjects(t)]));
const objectsOf = (tree: (typeof TREES)[number]): K8sObject[] => rendered.get(tree) ?? [];
const clone = <T>(o: T): T => structuredClone(o);
// Optional parts an overlay includes with `components:` (k8s/components/<name>). The Redis ones are checked
// here; components/monitoring has its own suite (packaging-monitoring.test.ts).
const ALL_COMPONENTS = readdirSync(path.join(K8S, 'components')).sort();
const COMPONENTS = ALL_COMPONENTS.filter((c) => c !== 'monitoring');

describe.each(TREES)('k8s/%s', (tree) => {
  const objects = objectsOf(tree);

  it('when rendered, then every object validates against its Kubernetes schema', () => {
    expect(objects.length).toBeGreaterThan(5);
    expect(objects.flatMap(schemaProblems)).toEqual([]);
  });

  it('when rendered, then every container is hardened, sized, probed, pinned and gets secrets only from Secrets', () => {
    expect(workloadProblems(objects)).toEqual([]);
  });

  it('when rendered, then the Service names its ports http and admin', () => {
    expect(servicePortProblems(find<IService>(objects, 'Service', SERVICE))).toEqual([]);
  });

  it('when rendered, then NetworkPolicies cover every pod and limit tokengate to its callers, DNS, Redis and 443', () => {
    expect(coverageProblems(objects)).toEqual([]);
    expect(serviceNetworkProblems(find<INetworkPolicy>(objects, 'NetworkPolicy', SERVICE))).toEqual([]);
  });

  it('when rendered, then tokengate reaches Redis on exactly the base ports, TCP 6379 and 6380 (TLS)', () => {
    expect(redisPortProblems(find<INetworkPolicy>(objects, 'NetworkPolicy', SERVICE), REDIS_BASE_PORTS)).toEqual([]);
  });

  it('when rendered, then a PDB and an autoscaling/v2 HPA own availability and the replica count', () => {
    expect(scalingProblems(objects)).toEqual([]);
  });
});

describe('k8s overlays', () => {
  it('when the production overlay is rendered, then it has 3+ replicas, topology spread, TLS Ingress and an https gateway', () => {
    expect(productionProblems(objectsOf('overlays/production'))).toEqual([]);
  });

  it('when the production overlay is rendered, then its ConfigMap carries GATEWAY_MERCHANT_KEY for the operator to fill (empty: unset)', () => {
    const cm = configMaps(objectsOf('overlays/production')).find((c) => c.metadata?.name?.startsWith('tokengate-config'));
    expect(cm?.data).toHaveProperty('GATEWAY_MERCHANT_KEY');
    expect(cm?.data?.GATEWAY_MERCHANT_KEY).toMatch(/^$|^[A-Za-z0-9_-]{4,64}$/);
  });

  it('when the sandbox overlay is rendered, then it runs the emulator from the same image and a hardened Redis', () => {
    expect(sandboxProblems(objectsOf('overlays/sandbox'))).toEqual([]);
  });

  it('when an overlay is rendered, then the service and the emulator run one pinned release of the image', () => {
    for (const tree of TREES) {
      const images = byKind<IDeployment>(objectsOf(tree), 'Deployment').flatMap((d) => podSpec(d).containers.map((c) => c.image ?? ''));
      const ours = new Set(images.filter((i) => i.includes('/tokengate')));
      expect(ours.size).toBe(1);
    }
  });
});

describe('k8s/components', () => {
  const production = objectsOf('overlays/production');
  const productionPolicy = find<INetworkPolicy>(production, 'NetworkPolicy', SERVICE);
  const names = (objects: K8sObject[]) => objects.map((o) => `${o.kind}/${o.kind === 'ConfigMap' ? o.metadata.name.replace(/-[a-z0-9]{10}$/, '') : o.metadata.name}`).sort();
  /** What each component adds to the service's settings (the generated ConfigMap). */
  const COMPONENT_SETTINGS: Record<string, Record<string, string>> = { 'redis-sentinel': { REDIS_WRITE_REPLICAS: '1' } };
  const settingsOf = (objects: K8sObject[]) => (objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('tokengate-config')) as unknown as { data?: Record<string, string> } | undefined)?.data;

  it('when listed, then each is a Redis component whose ports the checks and docs/deploy.md know', () => {
    expect(COMPONENTS).toEqual(Object.keys(REDIS_COMPONENT_PORTS).sort());
    for (const ports of Object.values(REDIS_COMPONENT_PORTS)) expect(ports.length).toBeGreaterThan(0);
  });

  describe.each(COMPONENTS)('%s', (component) => {
    const objects = renderWithComponents('overlays/production', [`components/${component}`]);
    const np = find<INetworkPolicy>(objects, 'NetworkPolicy', SERVICE);

    it('when included in the production overlay, then it renders and every object still passes the schema and policy checks', () => {
      expect(objects.flatMap(schemaProblems)).toEqual([]);
      expect(workloadProblems(objects)).toEqual([]);
      expect(coverageProblems(objects)).toEqual([]);
      expect(serviceNetworkProblems(np)).toEqual([]);
      expect(productionProblems(objects)).toEqual([]);
    });

    it('when included in the production overlay, then it adds exactly its Redis ports and settings and changes nothing else', () => {
      expect(redisPortProblems(np, [...REDIS_BASE_PORTS, ...(REDIS_COMPONENT_PORTS[component] ?? [])])).toEqual([]);
      expect(nonRedisEgress(np)).toEqual(nonRedisEgress(productionPolicy));
      expect(np.spec?.ingress).toEqual(productionPolicy.spec?.ingress);
      expect(names(objects)).toEqual(names(production));
      expect(settingsOf(objects)).toEqual({ ...settingsOf(production), ...(COMPONENT_SETTINGS[component] ?? {}) });
    });
  });

  it('when every component is included at once, then the Redis egress is the base ports plus all of theirs', () => {
    const objects = renderWithComponents('overlays/production', COMPONENTS.map((c) => `components/${c}`));
    const np = find<INetworkPolicy>(objects, 'NetworkPolicy', SERVICE);
    expect(serviceNetworkProblems(np)).toEqual([]);
    expect(redisPortProblems(np, [...REDIS_BASE_PORTS, ...Object.values(REDIS_COMPONENT_PORTS).flat()])).toEqual([]);
  });

  it('when docs/deploy.md is read, then it names every Redis port the manifests open and every component', () => {
    expect(redisDocProblems(readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8'))).toEqual([]);
  });
});

describe('k8s/examples/secrets.example.yaml', () => {
  const examples = readObjects('examples/secrets.example.yaml');

  it('when read, then it holds valid Secrets with placeholders only, covering every key the pods read', () => {
    expect(examples.flatMap(schemaProblems)).toEqual([]);
    const secrets = examples as unknown as ISecret[];
    for (const s of secrets) {
      expect(s.data).toBeUndefined();
      expect(Object.values(s.stringData ?? {}).every((v) => v === 'REPLACE_ME')).toBe(true);
    }
    const keys = new Set(Object.keys(secrets.find((s) => s.metadata?.name === 'tokengate-secrets')?.stringData ?? {}));
    for (const tree of TREES) {
      for (const d of byKind<IDeployment>(objectsOf(tree), 'Deployment')) {
        for (const c of podSpec(d).containers) {
          for (const e of c.env ?? []) {
            if (e.name.endsWith('_FILE')) expect(keys).toContain(path.basename(e.value ?? ''));
            if (e.valueFrom?.secretKeyRef) expect(keys).toContain(e.valueFrom.secretKeyRef.key);
          }
        }
      }
    }
    const tls = find<IIngress>(objectsOf('overlays/production'), 'Ingress', SERVICE).spec?.tls?.[0]?.secretName;
    expect(secrets.map((s) => s.metadata?.name)).toContain(tls);
  });

  it('when any kustomization is read, then none includes the examples', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const full = path.join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (name === 'kustomization.yaml') files.push(full);
      }
    };
    walk(K8S);
    expect(files.length).toBe(3 + ALL_COMPONENTS.length);
    for (const f of files) expect(readFileSync(f, 'utf8')).not.toMatch(/examples|secrets\.example/);
  });
});

// Each rule must be able to fail: run it on deliberately broken copies of the rendered objects.
describe('k8s policy checks on broken copies', () => {
  const production = objectsOf('overlays/production');
  const deployment = find<IDeployment>(production, 'Deployment', SERVICE);
  const broken = (mutate: (d: IDeployment) => void): IDeployment => {
    const copy = clone(deployment);
    mutate(copy);
    return copy;
  };
  const main = (d: IDeployment) => podSpec(d).containers[0]!;

  it('when a container loses readOnlyRootFilesystem, its capability drop or its limits, then the check fails', () => {
    const d = broken((x) => {
      main(x).securityContext = { ...main(x).securityContext, readOnlyRootFilesystem: false, capabilities: { drop: [] } };
      delete main(x).resources?.limits;
    });
    expect(containerProblems(podSpec(d), 'copy')).toEqual(
      expect.arrayContaining([expect.stringContaining('readOnlyRootFilesystem'), expect.stringContaining('drop ALL'), expect.stringContaining('no cpu limits')]),
    );
  });

  it('when an init container runs as root with a latest image, then the check fails', () => {
    const d = broken((x) => {
      podSpec(x).initContainers = [{ name: 'init', image: 'busybox:latest', securityContext: { runAsUser: 0 } }];
    });
    expect(containerProblems(podSpec(d), 'copy')).toEqual(expect.arrayContaining(['copy/init: image busybox:latest uses latest', 'copy/init: securityContext.runAsUser is not a non-zero UID']));
  });

  it('when the PIN is inlined or a *_FILE path leaves the Secret mount, then the check fails', () => {
    const d = broken((x) => {
      main(x).env = [{ name: 'GATEWAY_API_PIN', value: '123456' }, { name: 'REDIS_URL_FILE', value: '/etc/redis-url' }];
    });
    const problems = secretProblems(podSpec(d), configMaps(production), 'copy');
    expect(problems).toEqual(expect.arrayContaining([expect.stringContaining('GATEWAY_API_PIN: a credential not taken from a Secret'), expect.stringContaining('REDIS_URL_FILE: not a path inside a mounted Secret')]));
  });

  it('when probes move off the admin port or the grace period is shorter than the gateway timeout, then the check fails', () => {
    const d = broken((x) => {
      main(x).readinessProbe = { httpGet: { path: '/readyz', port: 'http' } };
      podSpec(x).terminationGracePeriodSeconds = 30;
    });
    expect(serviceProblems(d, configMaps(production))).toEqual(
      expect.arrayContaining([expect.stringContaining('readinessProbe: not on the admin port'), expect.stringContaining('terminationGracePeriodSeconds 30')]),
    );
  });

  it('when egress opens port 80 or ingress admits every source, then the network check fails', () => {
    const np = clone(find<INetworkPolicy>(production, 'NetworkPolicy', SERVICE));
    np.spec!.egress!.push({ ports: [{ protocol: 'TCP', port: 80 }] });
    np.spec!.ingress!.push({ ports: [{ protocol: 'TCP', port: 8080 }] });
    expect(serviceNetworkProblems(np)).toEqual(expect.arrayContaining([expect.stringContaining('egress to TCP 80'), expect.stringContaining('admits every source')]));
  });

  it('when 6380 is dropped, 26379 opens without its component or the cluster bus opens, then the Redis checks fail', () => {
    const np = clone(find<INetworkPolicy>(production, 'NetworkPolicy', SERVICE));
    const redis = np.spec!.egress!.find((r) => r.ports?.some((p) => p.port === 6380))!;
    redis.ports = redis.ports!.filter((p) => p.port !== 6380);
    np.spec!.egress!.push({ ports: [{ protocol: 'TCP', port: 26379 }] }, { ports: [{ protocol: 'TCP', port: 17000, endPort: 17005 }] });
    expect(redisPortProblems(np, REDIS_BASE_PORTS)).toEqual([
      expect.stringContaining('lacks TCP 6380'),
      expect.stringContaining('opens TCP 26379'),
      expect.stringContaining('opens TCP 17000-17005'),
    ]);
    expect(serviceNetworkProblems(np)).toEqual([expect.stringContaining('egress to TCP 17000-17005 is not'), expect.stringContaining('17000-17005 opens a Redis cluster bus port')]);
  });

  it('when a component adds nothing, a wider range or drops the DNS rule, then the component checks fail', () => {
    const np = clone(find<INetworkPolicy>(production, 'NetworkPolicy', SERVICE));
    expect(redisPortProblems(np, [...REDIS_BASE_PORTS, [26379, 26379]])).toEqual([expect.stringContaining('lacks TCP 26379')]);
    np.spec!.egress!.push({ ports: [{ protocol: 'TCP', port: 7000, endPort: 7010 }] });
    expect(redisPortProblems(np, [...REDIS_BASE_PORTS, [7000, 7005]])).toEqual([expect.stringContaining('lacks TCP 7000-7005'), expect.stringContaining('opens TCP 7000-7010')]);
    expect(serviceNetworkProblems(np)).toEqual([expect.stringContaining('egress to TCP 7000-7010 is not')]);
    np.spec!.egress = np.spec!.egress!.filter((r) => !r.ports?.some((p) => p.port === 53));
    expect(nonRedisEgress(np)).not.toEqual(nonRedisEgress(find<INetworkPolicy>(production, 'NetworkPolicy', SERVICE)));
  });

  it('when a component does not exist or docs/deploy.md names only 6379, then rendering and the docs check fail', () => {
    expect(() => renderWithComponents('overlays/production', ['components/missing'])).toThrow(/kubectl kustomize k8s\/overlays\/production \+ k8s\/components\/missing failed/);
    expect(redisDocProblems('The NetworkPolicy allows egress to 6379 only.')).toEqual(
      expect.arrayContaining(['docs/deploy.md does not mention Redis port 6380', 'docs/deploy.md does not mention Redis port 26379', 'docs/deploy.md does not name components/redis-cluster']),
    );
  });

  it('when production drops to 1 replica, loses its spread or its TLS, then the production check fails', () => {
    const objects = clone(production);
    const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler') as unknown as { spec: { minReplicas: number } };
    hpa.spec.minReplicas = 1;
    delete podSpec(find<IDeployment>(objects, 'Deployment', SERVICE)).topologySpreadConstraints;
    delete find<IIngress>(objects, 'Ingress', SERVICE).spec!.tls;
    const problems = productionProblems(objects);
    expect(problems).toEqual(expect.arrayContaining(['production runs fewer than 3 replicas', expect.stringContaining('topology'), expect.stringContaining('not covered by TLS')]));
    expect(scalingProblems(objects)).toEqual([expect.stringContaining('PodDisruptionBudget minAvailable 2')]);
  });

  it('when an object breaks its schema or has an unknown kind, then schema validation fails', () => {
    const d = broken((x) => {
      (main(x).ports![0] as { containerPort: unknown }).containerPort = 'eighty';
    }) as unknown as K8sObject;
    expect(schemaProblems(d)).toEqual([expect.stringContaining('containerPort must be integer')]);
    expect(schemaProblems({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual([expect.stringContaining('unknown apiVersion/kind')]);
  });
});

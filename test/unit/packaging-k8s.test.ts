import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { IService } from 'kubernetes-models/v1/Service';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import { byKind, find, K8S, readObjects, renderObjects, schemaProblems, type K8sObject } from './packaging-k8s';
import { configMaps, containerProblems, podSpec, secretProblems, SERVICE, serviceProblems, workloadProblems } from './packaging-policy';
import { coverageProblems, productionProblems, sandboxProblems, scalingProblems, servicePortProblems, serviceNetworkProblems } from './packaging-policy-net';

// Rendered once: `kubectl kustomize` takes ~0.2 s per tree.
const TREES = ['base', 'overlays/sandbox', 'overlays/production'] as const;
const rendered = new Map<string, K8sObject[]>(TREES.map((t) => [t, renderObjects(t)]));
const objectsOf = (tree: (typeof TREES)[number]): K8sObject[] => rendered.get(tree) ?? [];
const clone = <T>(o: T): T => structuredClone(o);

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

  it('when rendered, then a PDB and an autoscaling/v2 HPA own availability and the replica count', () => {
    expect(scalingProblems(objects)).toEqual([]);
  });
});

describe('k8s overlays', () => {
  it('when the production overlay is rendered, then it has 3+ replicas, topology spread, TLS Ingress and an https gateway', () => {
    expect(productionProblems(objectsOf('overlays/production'))).toEqual([]);
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
    expect(files.length).toBe(3);
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

import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { load, loadAll } from 'js-yaml';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { TriggerAuthentication } from '@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { loadConfig } from '#libs/core';
import { bullPrefix, JOB_OPTIONS, QUEUES, type JobName, type QueueName } from '#libs/queue';

// Issue 30 "Kubernetes": deploy/kubernetes builds with `kubectl kustomize` (no cluster: nothing is
// applied), every object is checked against the Kubernetes and KEDA schemas (the kubernetes-models
// packages: types, formats, enums, required fields; not unknown fields, which the schemas allow), and
// against what the app needs: probes on its health routes, resources fitted to measured RSS, a
// non-root read-only container, the worker's shutdown grace, and KEDA on the keys BullMQ really uses.

const run = promisify(execFile);
const OVERLAYS = ['small', 'production'] as const;

/** Figures the manifests are fitted to (docs/benchmarks.md "Video engine", "Re-run after the structure work"). */
const VIDEO_PEAK_RSS_MB = 1_519;

type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: unknown };
// The shapes read below (the schemas checked them; these types only spare casts).
type Probe = { httpGet?: { path: string; port: string | number } };
type Container = {
  name: string; ports?: { name?: string; containerPort: number }[]; env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: Probe; readinessProbe?: Probe; startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; privileged?: boolean; capabilities?: { drop?: string[]; add?: string[] } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
type Volume = { name: string; emptyDir?: { medium?: string; sizeLimit?: string } };
type PodSpec = {
  containers: Container[]; initContainers?: Container[]; volumes?: Volume[]; terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
};
type DeploymentObj = Obj & { spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } } };
type Trigger = { type: string; metadata: Record<string, string>; authenticationRef?: { name: string } };
type ScaledObjectObj = Obj & {
  spec: {
    scaleTargetRef: { apiVersion?: string; kind?: string; name: string }; minReplicaCount?: number; maxReplicaCount?: number; cooldownPeriod?: number;
    advanced?: { horizontalPodAutoscalerConfig?: { behavior?: { scaleDown?: { stabilizationWindowSeconds?: number } } } }; triggers: Trigger[];
  };
};
type SecretObj = Obj & { data?: Record<string, string>; stringData?: Record<string, string> };

/** The schema of each kind the manifests may hold; any other kind fails the test. */
const SCHEMAS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'keda.sh/v1alpha1/TriggerAuthentication': TriggerAuthentication,
};

/** A Kubernetes quantity in bytes (Ki, Mi, Gi; k, M, G) or cores (m). */
function quantity(q: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|k|M|G|Ki|Mi|Gi)?$/.exec(String(q));
  if (!m) throw new Error(`not a quantity this test reads: ${q}`);
  const units: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
  return Number(m[1]) * (m[2] ? units[m[2]]! : 1);
}

async function build(overlay: string): Promise<Obj[]> {
  try {
    const { stdout } = await run('kubectl', ['kustomize', `deploy/kubernetes/overlays/${overlay}`]);
    return loadAll(stdout) as Obj[];
  } catch (err) {
    // Debian's kubernetes-client (1.20) bundles kustomize v2, which knows no Components (kustomize ≥ 3.7).
    throw new Error(`kubectl kustomize ${overlay} failed (kubectl with kustomize ≥ v4 needed): ${(err as { stderr?: string }).stderr ?? err}`, { cause: err });
  }
}

const named = <T extends Obj>(objs: Obj[], kind: string, name: string): T => {
  const found = objs.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found as T;
};
const deployments = (objs: Obj[]) => objs.filter((o): o is DeploymentObj => o.kind === 'Deployment');
const containers = (d: DeploymentObj) => [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers];

/** What a Deployment's container sees: its envFrom ConfigMaps and Secrets, then its env. */
function environment(objs: Obj[], c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, named<Obj & { data: Record<string, string> }>(objs, 'ConfigMap', from.configMapRef.name).data);
    if (from.secretRef) Object.assign(env, named<SecretObj>(objs, 'Secret', from.secretRef.name).stringData);
  }
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

/** The placeholders filled in as an operator would (test values, never real). */
function filled(env: Record<string, string>): Record<string, string> {
  const values: Record<string, string> = { APP_SECRET: 'a'.repeat(64), TWILIO_ACCOUNT_SID: 'AC0123', TWILIO_FROM: '+15005550006' };
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === 'CHANGE_ME' ? (values[k] ?? 'test-value') : v.replace('CHANGE_ME', 'test-password')]));
}

/** A constant of a source file (`export const NAME = 30_000;`), read as text: importing the worker's module would load all of it. */
function constant(file: string, name: string): number {
  const m = new RegExp(`const ${name} = ([\\d_]+);`).exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`${name} not found in ${file}`);
  return Number(m[1]!.replace(/_/g, ''));
}

const built: Record<string, Obj[]> = {};

beforeAll(async () => {
  for (const overlay of OVERLAYS) built[overlay] = await build(overlay);
});

describe.each(OVERLAYS)('deploy/kubernetes overlay %s (issue 30 "Kubernetes")', (overlay) => {
  const objs = () => built[overlay]!;

  it('builds with kubectl kustomize, and every object passes the Kubernetes or KEDA schema of its kind', () => {
    const kinds = objs().map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual([
      'ConfigMap/media-render-config', 'Deployment/media-render-api', 'Deployment/media-render-worker', 'HorizontalPodAutoscaler/media-render-api',
      ...(overlay === 'production' ? ['Ingress/media-render-api'] : []),
      'PodDisruptionBudget/media-render-api', 'PodDisruptionBudget/media-render-worker', 'ScaledObject/media-render-worker',
      'Secret/media-render-keda-redis', 'Secret/media-render-secrets', 'Service/media-render-api', 'TriggerAuthentication/media-render-redis',
    ]);
    for (const o of objs()) {
      const Model = SCHEMAS[`${o.apiVersion}/${o.kind}`];
      if (!Model) throw new Error(`no schema for ${o.apiVersion} ${o.kind}`);
      expect(() => new Model(o as never).validate()).not.toThrow();
      expect((o as { metadata: { namespace?: string } }).metadata.namespace).toBe('media-render');
    }
  });

  it('the schemas refuse what a cluster would refuse (the check can fail)', () => {
    const api = structuredClone(named<DeploymentObj>(objs(), 'Deployment', 'media-render-api'));
    api.spec.template.spec.containers[0]!.resources!.limits!.memory = 'a gigabyte';
    expect(() => new Deployment(api as never).validate()).toThrow(/quantity/);
    const so = structuredClone(named<ScaledObjectObj>(objs(), 'ScaledObject', 'media-render-worker'));
    (so.spec.triggers[0]!.metadata as Record<string, unknown>).listLength = 1;
    expect(() => new ScaledObject(so as never).validate()).toThrow(/must be string/);
  });

  it('every container: requests and limits of CPU and memory, non-root, no capabilities, read-only root with emptyDir for DATA_DIR and /tmp', () => {
    for (const d of deployments(objs())) {
      const pod = d.spec.template.spec;
      expect([d.metadata.name, pod.securityContext]).toEqual([d.metadata.name, expect.objectContaining({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } })]);
      expect(pod.securityContext!.runAsUser).toBeGreaterThan(0);
      expect(d.spec.selector.matchLabels).toEqual(expect.objectContaining({ 'app.kubernetes.io/name': d.metadata.name }));
      for (const c of containers(d)) {
        const where = `${d.metadata.name}/${c.name}`;
        for (const r of ['cpu', 'memory']) {
          const [request, limit] = [c.resources?.requests?.[r], c.resources?.limits?.[r]];
          expect([where, r, typeof request, typeof limit]).toEqual([where, r, 'string', 'string']);
          expect([where, r, quantity(request!) <= quantity(limit!)]).toEqual([where, r, true]);
        }
        expect([where, c.securityContext]).toEqual([where, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } }]);
        const env = environment(objs(), c);
        const mounts = new Map((c.volumeMounts ?? []).map((m) => [m.mountPath, pod.volumes!.find((v) => v.name === m.name)!]));
        for (const path of [env.DATA_DIR!, '/tmp']) expect([where, path, mounts.get(path)?.emptyDir]).toEqual([where, path, expect.objectContaining({ sizeLimit: expect.any(String) })]);
        expect([where, env.HOME]).toEqual([where, '/tmp']);
      }
    }
  });

  it('the API: probes on its health routes, its port behind the Service, its settings load, an HPA on CPU and a PDB', () => {
    const api = named<DeploymentObj>(objs(), 'Deployment', 'media-render-api');
    const [c] = api.spec.template.spec.containers;
    const config = loadConfig({ ...filled(environment(objs(), c!)), DATA_DIR: tmpdir() });
    expect([config.env, config.storage.driver, config.database.kind, config.signIn]).toEqual(['production', 's3', 'postgresql', true]);
    const port = c!.ports!.find((p) => p.containerPort === config.port)!;
    expect(port).toBeDefined();
    // apps/api/src/health: liveness answers while the process does; readiness checks PostgreSQL, Redis, the bucket.
    expect(c!.livenessProbe!.httpGet).toEqual({ path: `/${config.prefix}/health`, port: port.name });
    expect(c!.startupProbe!.httpGet).toEqual({ path: `/${config.prefix}/health`, port: port.name });
    expect(c!.readinessProbe!.httpGet).toEqual({ path: `/${config.prefix}/health/ready`, port: port.name });
    const service = named<Obj & { spec: { selector: Record<string, string>; ports: { targetPort: string }[] } }>(objs(), 'Service', 'media-render-api');
    expect(service.spec.selector).toEqual(api.spec.selector.matchLabels);
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual([port.name]);
    const hpa = named<Obj & { spec: { scaleTargetRef: unknown; minReplicas: number; maxReplicas: number; metrics: unknown[] } }>(objs(), 'HorizontalPodAutoscaler', 'media-render-api');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'media-render-api' });
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } }]);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
    // The HPA owns the count: a count in the Deployment would reset it at every apply.
    expect(api.spec.replicas).toBeUndefined();
    for (const name of ['media-render-api', 'media-render-worker']) {
      const pdb = named<Obj & { spec: { selector: { matchLabels: unknown } } }>(objs(), 'PodDisruptionBudget', name);
      expect(pdb.spec.selector.matchLabels).toEqual(named<DeploymentObj>(objs(), 'Deployment', name).spec.selector.matchLabels);
    }
    if (overlay === 'production') {
      const ingress = named<Obj & { spec: { rules: { host: string; http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }[] } }>(objs(), 'Ingress', 'media-render-api');
      expect(ingress.spec.rules[0]!.http.paths[0]!.backend.service).toEqual({ name: 'media-render-api', port: { name: 'http' } });
      // The links the API writes (PUBLIC_URL) name the host the Ingress serves.
      expect(new URL(config.publicUrl).host).toBe(ingress.spec.rules[0]!.host);
    }
  });

  it("the worker: the shutdown grace of compose, /dev/shm in memory, memory fitted to the video engine's measured peak, liveness on its listener's /livez", () => {
    const worker = named<DeploymentObj>(objs(), 'Deployment', 'media-render-worker');
    const pod = worker.spec.template.spec;
    const [c] = pod.containers;
    const config = loadConfig({ ...filled(environment(objs(), c!)), DATA_DIR: tmpdir() });
    expect([config.env, config.storage.driver, config.database.kind]).toEqual(['production', 's3', 'postgresql']);
    // apps/worker: running jobs get SHUTDOWN_GRACE_MS, the rest of the stop AFTER_RELEASE_MS and a few bounded seconds.
    const grace = constant('apps/worker/src/worker.module.ts', 'SHUTDOWN_GRACE_MS') + constant('apps/worker/src/main.ts', 'AFTER_RELEASE_MS');
    const compose = load(readFileSync('docker/compose.yaml', 'utf8')) as { services: { worker: { stop_grace_period: string; shm_size: string } } };
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThanOrEqual(grace + 5_000);
    expect(`${pod.terminationGracePeriodSeconds}s`).toBe(compose.services.worker.stop_grace_period);
    const shm = pod.volumes!.find((v) => v.name === c!.volumeMounts!.find((m) => m.mountPath === '/dev/shm')?.name);
    expect(shm?.emptyDir?.medium).toBe('Memory');
    expect(quantity(shm!.emptyDir!.sizeLimit!)).toBeGreaterThanOrEqual(quantity(compose.services.worker.shm_size.replace(/gb$/, 'G')) * 0.9);
    // /dev/shm's tmpfs pages count against the limit: a video's peak plus a full /dev/shm fit under it.
    expect(quantity(c!.resources!.requests!.memory!)).toBeGreaterThanOrEqual(VIDEO_PEAK_RSS_MB * 1e6);
    expect(quantity(c!.resources!.limits!.memory!)).toBeGreaterThanOrEqual(VIDEO_PEAK_RSS_MB * 1e6 + quantity(shm!.emptyDir!.sizeLimit!));
    // Two parts at once, as measured: the CPU limit is what os.availableParallelism() reads in the pod.
    expect(quantity(c!.resources!.limits!.cpu!)).toBe(2);
    // Its listener (apps/worker/src/metrics.ts) on the port the probe asks, reachable from the kubelet.
    expect([config.metrics.workerPort, config.metrics.workerHost]).toEqual([c!.ports![0]!.containerPort, '0.0.0.0']);
    expect(c!.livenessProbe?.httpGet).toEqual({ path: '/livez', port: c!.ports![0]!.name });
    expect([c!.readinessProbe, c!.startupProbe]).toEqual([undefined, undefined]);
  });

  it('KEDA scales the worker Deployment on the wait lists of the videos and stills queues, with a floor, a ceiling and a slow scale-down', () => {
    const so = named<ScaledObjectObj>(objs(), 'ScaledObject', 'media-render-worker');
    const worker = named<DeploymentObj>(objs(), 'Deployment', 'media-render-worker');
    expect(so.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: worker.metadata.name });
    expect(so.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
    expect(so.spec.maxReplicaCount).toBeGreaterThan(so.spec.minReplicaCount!);
    expect(worker.spec.replicas).toBeUndefined();
    expect(so.spec.cooldownPeriod).toBeGreaterThan(0);
    expect(so.spec.advanced!.horizontalPodAutoscalerConfig!.behavior!.scaleDown!.stabilizationWindowSeconds).toBeGreaterThanOrEqual(60);
    const env = filled(environment(objs(), worker.spec.template.spec.containers[0]!));
    const config = loadConfig({ ...env, DATA_DIR: tmpdir() });
    const watched: QueueName[] = ['videos', 'stills'];
    expect(so.spec.triggers.map((t) => [t.type, t.metadata.listName])).toEqual(watched.map((q) => ['redis', `${bullPrefix(config)}:${q}:wait`]));
    // KEDA reaches the Redis of REDIS_URL (host:port and password from a Secret, as it takes no URL).
    const redisUrl = new URL(environment(objs(), worker.spec.template.spec.containers[0]!).REDIS_URL!);
    for (const t of so.spec.triggers) {
      expect(Number(t.metadata.listLength)).toBeGreaterThan(0);
      expect(t.metadata.databaseIndex).toBe(redisUrl.pathname.slice(1) || '0');
      expect(t.metadata.enableTLS ?? 'false').toBe(String(redisUrl.protocol === 'rediss:'));
      const auth = named<Obj & { spec: { secretTargetRef: { parameter: string; name: string; key: string }[] } }>(objs(), 'TriggerAuthentication', t.authenticationRef!.name);
      const params = Object.fromEntries(auth.spec.secretTargetRef.map((r) => [r.parameter, named<SecretObj>(objs(), 'Secret', r.name).stringData![r.key]]));
      expect(params).toEqual({ address: `${redisUrl.hostname}:${redisUrl.port || 6379}`, password: decodeURIComponent(redisUrl.password) });
    }
  });

  it('no Secret holds a real-looking value: placeholders only, nothing base64-encoded', () => {
    for (const s of objs().filter((o): o is SecretObj => o.kind === 'Secret')) {
      expect([s.metadata.name, s.data]).toEqual([s.metadata.name, undefined]);
      for (const [key, value] of Object.entries(s.stringData ?? {})) {
        const where = `${s.metadata.name}.${key}`;
        // A placeholder, or an address on example.com whose only password is one.
        const ok = value === 'CHANGE_ME' || (/(^|[/@])[a-z0-9-]+\.example\.com(:\d+)?(\/|$)/.test(value) && !/:[^/@:]+@/.test(value.replace(':CHANGE_ME@', '@')));
        expect([where, ok]).toEqual([where, true]);
        expect([where, /[A-Za-z0-9+/=_-]{16,}/.test(value)]).toEqual([where, false]);
      }
    }
  });
});

// The list KEDA reads must be where BullMQ puts a waiting job of that queue: a job added with a
// priority goes to "<queue>:prioritized" (a sorted set) instead, and the scaler would never see it.
describe('the lists the ScaledObject watches hold the jobs waiting (real BullMQ, a Redis of its own)', () => {
  let dir: string;
  let port: number;
  let redis: Redis;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'k8s-redis-'));
    port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const { port: p } = s.address() as { port: number };
        s.close(() => resolve(p));
      });
    });
    const r = spawnSync('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--daemonize', 'yes', '--pidfile', join(dir, 'redis.pid'), '--save', '', '--appendonly', 'no']);
    if (r.status !== 0) throw new Error(`redis-server: ${r.stderr.toString()}`);
    redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
    for (let i = 0; i < 100; i++) {
      try {
        await redis.connect();
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });

  afterAll(async () => {
    await redis?.quit().catch(() => undefined);
    try {
      process.kill(Number(readFileSync(join(dir, 'redis.pid'), 'utf8')), 'SIGTERM');
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(OVERLAYS)('%s: every job of a watched queue, enqueued with its JOB_OPTIONS, is counted by the trigger on its queue', async (overlay) => {
    const so = named<ScaledObjectObj>(built[overlay]!, 'ScaledObject', 'media-render-worker');
    for (const t of so.spec.triggers) {
      const listName = t.metadata.listName!;
      const m = /^(.*):([a-z]+):wait$/.exec(listName)!;
      const [prefix, queueName] = [m[1]!, m[2] as QueueName];
      await redis.flushdb();
      const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port }, prefix });
      try {
        const jobs = QUEUES[queueName] as readonly JobName[];
        for (const job of jobs) await queue.add(job, {}, JOB_OPTIONS[job]);
        expect([listName, await redis.llen(listName)]).toEqual([listName, jobs.length]);
      } finally {
        await queue.close();
      }
    }
  });
});

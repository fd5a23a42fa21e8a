// The production shape on one machine (docs/production.md#the-production-shape-on-one-machine): PostgreSQL, a
// cluster of real Temporal server nodes on it with the Temporal UI, an S3-compatible store, HAProxy in front of
// N api hosts (HTTP, health-checked on /ready) and of the Temporal frontends (gRPC), M worker hosts and the
// embedding server, each a process on its own address (hosts.ts) with its own directory. They share nothing
// but the network: the apis and workers reach PostgreSQL, Temporal (through the load balancer) and the store by
// address, and keep their files (a worker's builds) in their own directory.
//
// Start order: PostgreSQL → the load balancer (its pools empty until their servers answer) → the Temporal
// cluster (the UI through the load balancer) → the store → secrets key, migrations, first organization → the
// embedding server → the apis → the workers. `stop` goes the other way. A drill kills and restarts any host.
import fs from 'node:fs';
import path from 'node:path';
import { childEnv, loadConfig, type Config } from '../../config';
import { startEmbeddedPostgres, type RunningPostgres } from '../postgres/embedded-postgres';
import { migrateAndBootstrap, type FirstStart } from '../start/database-setup';
import { readOrCreateSecretsKey } from '../start/secrets-key';
import { hostPlan, type HostPlan } from './hosts';
import { startLoadBalancer, type LoadBalancer } from './load-balancer';
import { openNetworkFaults, type Partition } from './network-faults';
import { motoPython, startObjectStore, type ObjectStore } from './object-store';
import { PlatformHost } from './platform-hosts';
import { startTemporalCluster, type TemporalCluster } from './temporal-cluster';

export interface ProductionShapeOptions {
  /** Every host's directory is under it (`<dataDir>/<host name>`). */
  dataDir: string;
  /** The first three octets of the hosts' addresses (hosts.ts). */
  base?: string;
  temporalNodes?: number;
  apis?: number;
  workers?: number;
  /** Run the local embedding server (knowledge bases embed with it). */
  embeddings?: boolean;
  /** The Node the api and the workers run on (obtainPlatformNode); this one by default. */
  node?: string;
  /** Added to every api's and worker's environment (a drill's shorter heartbeat timeouts). */
  env?: Record<string, string>;
  /** The HAProxy binary (tools/obtain-haproxy.sh). */
  haproxy: string;
  /** What each step says. */
  say?: (line: string) => void;
}

export interface ProductionShape {
  plan: HostPlan;
  /** The load balancer's URL: what clients call. */
  apiUrl: string;
  /** The load balancer's gRPC address: what the apis and workers call Temporal at. */
  temporalAddress: string;
  uiUrl: string;
  databaseUrl: string;
  /** Created on the first start of an empty database; shown once. */
  bootstrapKey: string | undefined;
  /** The same key, with the link that sets the first user's password. */
  firstStart: FirstStart | undefined;
  postgres(): RunningPostgres;
  temporal: TemporalCluster;
  lb: LoadBalancer;
  store: ObjectStore;
  apis: PlatformHost[];
  workers: PlatformHost[];
  embeddings: PlatformHost | undefined;
  /** A managed database's failover: fast shutdown, then a start on the same data. */
  restartPostgres(): Promise<void>;
  /** Why no host can be cut from another (not root, no cgroup v2, no iptables); undefined: they can. */
  networkFaultsUnavailable: string | undefined;
  /** Cuts an api or worker host from PostgreSQL, both ways, until healed (as root: network-faults.ts). */
  partitionFromPostgres(host: PlatformHost): Partition;
  stop(): Promise<void>;
}

export async function startProductionShape(opts: ProductionShapeOptions): Promise<ProductionShape> {
  const say = opts.say ?? (() => undefined);
  const plan = hostPlan(opts);
  const dirOf = (name: string) => {
    const dir = path.join(opts.dataDir, name);
    fs.mkdirSync(dir, { recursive: true, mode: 0o711 });
    return dir;
  };
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o711 });
  const config = loadConfig(childEnv({ DATA_DIR: opts.dataDir }));
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    const pgSpec = {
      dir: dirOf('postgres'),
      host: plan.postgres.host,
      port: plan.postgres.port,
      database: 'tarmac',
      persistent: true,
      config,
    };
    let postgres = await startEmbeddedPostgres(pgSpec);
    stops.push(() => postgres.stop());
    say(`PostgreSQL ${postgres.version} on ${plan.postgres.host}:${plan.postgres.port}`);

    const temporalAddress = `${plan.lb.host}:${plan.lb.grpcPort}`;
    const lb = await startLoadBalancer({
      dir: dirOf('lb'),
      binary: opts.haproxy,
      http: {
        host: plan.lb.host,
        port: plan.lb.httpPort,
        backends: plan.apis.map((a) => ({ name: a.name, address: `${a.host}:${a.port}` })),
        alsoOn: [`${plan.lb.runs.host}:${plan.lb.runs.port}`],
      },
      grpc: {
        host: plan.lb.host,
        port: plan.lb.grpcPort,
        backends: plan.temporal.map((n) => ({ name: `temporal-${n.name}`, address: `${n.host}:${n.firstPort}` })),
      },
    });
    stops.push(() => lb.stop());
    say(`load balancer (HAProxy) on ${lb.httpUrl} (the apis) and ${temporalAddress} (Temporal)`);

    const temporal = await startTemporalCluster({
      postgresUrl: postgres.url,
      nodes: plan.temporal.map((n) => ({ ...n, dir: dirOf(`temporal-${n.name}`) })),
      cacheDir: config.cacheDir,
      namespace: config.temporal.namespace,
      clusterAddress: temporalAddress,
      ui: { host: plan.ui.host, port: plan.ui.port, dir: dirOf('temporal-ui'), temporalGrpcAddress: temporalAddress },
    });
    stops.push(() => temporal.stop());
    const uiUrl = `http://${plan.ui.host}:${plan.ui.port}`;
    say(`Temporal cluster: ${temporal.nodes.length} nodes (${temporal.frontends.join(', ')}), UI ${uiUrl}`);

    const store = await startObjectStore({
      dir: dirOf('store'),
      host: plan.store.host,
      port: plan.store.port,
      bucket: 'tarmac',
      python: motoPython(config.cacheDir),
    });
    stops.push(() => store.stop());
    say(`object store (S3, moto) on ${store.endpoint}`);

    const secretsKey = readOrCreateSecretsKey(config);
    const firstStart = await migrateAndBootstrap(postgres.url, config, () => undefined);

    const common = childEnv({
      DATABASE_URL: postgres.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_UI_URL: uiUrl,
      SECRETS_KEY: secretsKey,
      PUBLIC_BASE_URL: lb.httpUrl,
      RUN_API_BASE_URL: `http://${plan.lb.runs.host}:${plan.lb.runs.port}`,
      ...store.env,
      ...(opts.embeddings ? { LOCAL_EMBEDDINGS_URL: `http://${plan.embeddings.host}:${plan.embeddings.port}/v1` } : {}),
      ...opts.env,
    });
    const node = opts.node ?? process.execPath;
    const readiness = {
      temporalAddress,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
    };
    // As root, the apis and workers are each in a network group of their own, so that a drill can partition one.
    const faults = openNetworkFaults(`tarmac-shape-${process.pid}`);
    if ('unavailable' in faults) say(`no network faults: ${faults.unavailable}`);
    else stops.push(async () => faults.close());
    const host = (spec: ConstructorParameters<typeof PlatformHost>[0]) => {
      const grouped = spec.role !== 'embeddings' && !('unavailable' in faults);
      const h = new PlatformHost(
        grouped ? { ...spec, networkGroup: faults.groupOf(spec.name) } : spec,
        node,
        common,
        readiness,
      );
      stops.push(() => h.stop());
      return h;
    };
    const embeddings = opts.embeddings
      ? host({
          name: 'embeddings',
          role: 'embeddings',
          host: plan.embeddings.host,
          port: plan.embeddings.port,
          dir: dirOf('embeddings'),
          env: {
            LOCAL_EMBEDDINGS_HOST: plan.embeddings.host,
            LOCAL_EMBEDDINGS_PORT: String(plan.embeddings.port),
          },
        })
      : undefined;
    if (embeddings) {
      await embeddings.start();
      say(`embedding server on ${embeddings.url}`);
    }
    const apis = plan.apis.map((a) =>
      host({
        name: a.name,
        role: 'api',
        host: a.host,
        port: a.port,
        dir: dirOf(a.name),
        env: { HOST: a.host, PORT: String(a.port), DATA_DIR: path.join(opts.dataDir, a.name) },
      }),
    );
    await Promise.all(apis.map((a) => a.start()));
    say(`${apis.length} apis: ${apis.map((a) => a.url).join(', ')}`);
    const buildDir = dirOf('builds');
    // As root, each worker's builds are its own (a mount namespace of its own); otherwise they share one directory.
    const ownDisks = process.getuid?.() === 0;
    if (!ownDisks) say('not root: the workers share one BUILD_DIR (as root each has its own, as on separate hosts)');
    const workers = plan.workers.map((w) =>
      host({
        name: w.name,
        role: 'worker',
        host: w.host,
        port: w.metricsPort,
        dir: dirOf(w.name),
        env: {
          HOST: w.host,
          WORKER_METRICS_PORT: String(w.metricsPort),
          DATA_DIR: path.join(opts.dataDir, w.name),
          BUILD_DIR: buildDir,
          // User code's Node stays this one (the system's), whatever runs the worker.
          NODEJS_RUNTIME: config.nodeRuntime,
        },
        // Builds name their absolute paths: every worker has them at BUILD_DIR, each on its own disk.
        ...(ownDisks ? { ownDisk: { source: dirOf(path.join(w.name, 'builds')), target: buildDir } } : {}),
      }),
    );
    await Promise.all(workers.map((w) => w.start()));
    say(`${workers.length} workers: ${plan.workers.map((w) => w.host).join(', ')}`);

    return {
      plan,
      apiUrl: lb.httpUrl,
      temporalAddress,
      uiUrl,
      databaseUrl: postgres.url,
      bootstrapKey: firstStart?.apiKey,
      firstStart,
      postgres: () => postgres,
      temporal,
      lb,
      store,
      apis,
      workers,
      embeddings,
      restartPostgres: async () => {
        await postgres.stop();
        postgres = await startEmbeddedPostgres(pgSpec);
      },
      networkFaultsUnavailable: 'unavailable' in faults ? faults.unavailable : undefined,
      partitionFromPostgres: (h) => {
        if ('unavailable' in faults) throw new Error(`cannot partition ${h.name}: ${faults.unavailable}`);
        return faults.partition(h.name, plan.postgres);
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The config the banner reads: the shape's URLs and store, as an api of it sees them. */
export const bannerConfig = (shape: ProductionShape, dataDir: string): Config =>
  loadConfig(
    childEnv({
      DATA_DIR: dataDir,
      DATABASE_URL: shape.databaseUrl,
      TEMPORAL_ADDRESS: shape.temporalAddress,
      TEMPORAL_UI_URL: shape.uiUrl,
      PUBLIC_BASE_URL: shape.apiUrl,
      ...shape.store.env,
    }),
  );

// The platform's own hosts in the production shape: api, worker and embedding server processes, each on its
// own address with its own directory (DATA_DIR: a worker's builds and spools are its own disk), started with
// the environment an operator would give it (platformEnv) and checked ready the way `npm start` checks them:
// an api answers 200 on /ready, a worker is listed among the task queue's pollers, the embedding server answers
// /health. A worker's builds are on a disk of its own (ownDisk). A drill kills (SIGKILL), stops (SIGTERM: a
// worker drains) and restarts each one.
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { API_MAIN, EMBEDDINGS_MAIN, WORKER_MAIN } from '../start/paths';
import { ClusterProcess, waitUntilReady } from './node-process';

export type PlatformRole = 'api' | 'worker' | 'embeddings';

/** Up to this long for a host to be ready (a worker bundles its workflows at start). */
const READY_TIMEOUT_MS = 180_000;

export interface PlatformHostSpec {
  name: string;
  role: PlatformRole;
  host: string;
  /** Where it listens: the api's port, the worker's metrics port, the embedding server's port. */
  port: number;
  dir: string;
  /** Its environment besides what every host gets. */
  env: Record<string, string>;
  /**
   * Its own disk at a path every host of its role names alike (a worker's BUILD_DIR: a build names its own
   * absolute paths): `source` bound at `target` in a mount namespace of its own (as root), so that no other
   * host sees it.
   */
  ownDisk?: { source: string; target: string };
  /** The cgroup.procs file of its network group (network-faults.ts): it enters it before anything else. */
  networkGroup?: string;
}

/** Binds $1 at $2 in the new mount namespace, then becomes the host's program ($3 and on). */
const OWN_DISK = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
/** Enters the group whose cgroup.procs is $1, then becomes the host's program ($2 and on). */
const ENTER_GROUP = 'echo $$ > "$1" && shift && exec "$@"';

export interface Readiness {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
}

export class PlatformHost {
  process: ClusterProcess | undefined;
  readonly logFile: string;

  constructor(
    readonly spec: PlatformHostSpec,
    private readonly node: string,
    private readonly baseEnv: NodeJS.ProcessEnv,
    private readonly readiness: Readiness,
  ) {
    fs.mkdirSync(spec.dir, { recursive: true, mode: 0o711 });
    this.logFile = path.join(spec.dir, `${spec.role}.log`);
  }

  get name(): string {
    return this.spec.name;
  }

  /** `http://host:port` of an api (or the embedding server). */
  get url(): string {
    return `http://${this.spec.host}:${this.spec.port}`;
  }

  get running(): boolean {
    return this.process?.running ?? false;
  }

  /** Starts it and waits until it is ready. */
  async start(): Promise<void> {
    const main = { api: API_MAIN, worker: WORKER_MAIN, embeddings: EMBEDDINGS_MAIN }[this.spec.role];
    const env = { ...this.baseEnv, ...this.spec.env };
    const disk = this.spec.ownDisk;
    const program: string[] = disk
      ? ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', OWN_DISK, 'sh', disk.source, disk.target]
      : [];
    program.push(this.node, main);
    if (this.spec.networkGroup) program.unshift('sh', '-c', ENTER_GROUP, 'sh', this.spec.networkGroup);
    const [command, ...args] = program;
    this.process = new ClusterProcess(this.name, command, args, this.logFile, env);
    await waitUntilReady(this.process, this.name, () => this.ready(), READY_TIMEOUT_MS);
  }

  /** SIGKILL: the host is gone, as a machine that loses power is. */
  async kill(): Promise<void> {
    await this.process?.kill();
  }

  /** SIGTERM: an api closes its streams, a worker stops polling and drains its activities (then SIGKILL). */
  async stop(graceMs = 60_000): Promise<void> {
    await this.process?.stop(graceMs);
  }

  async restart(): Promise<void> {
    if (this.running) await this.stop();
    await this.start();
  }

  private async ready(): Promise<boolean> {
    if (this.spec.role === 'worker') return this.polling();
    const route = this.spec.role === 'api' ? '/ready' : '/health';
    const res = await fetch(`${this.url}${route}`, { signal: AbortSignal.timeout(2_000) });
    await res.body?.cancel();
    return res.status === 200;
  }

  /** Listed by Temporal among its task queue's workflow pollers (identity `<pid>@<host>`). */
  private async polling(): Promise<boolean> {
    const pid = this.process?.pid;
    const connection = await Connection.connect({ address: this.readiness.temporalAddress });
    try {
      const res = await connection.workflowService.describeTaskQueue({
        namespace: this.readiness.namespace,
        taskQueue: { name: this.readiness.taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
      });
      return (res.pollers ?? []).some((p) => p.identity?.startsWith(`${pid}@`));
    } finally {
      await connection.close();
    }
  }
}

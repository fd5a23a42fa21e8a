// The production shape of the benchmarks: the api and the worker as processes of their own, each with its own
// pool (DATABASE_POOL_SIZE), on the test stack's PostgreSQL and Temporal dev server, started with the drills'
// helpers (test/drills/processes.ts: `dist/src/api/main.js`, and the worker of `npm run worker` on a prebuilt
// workflow bundle). This process keeps only the load generator, the bare baselines and the run watcher. Both
// processes carry the probe (probe.ts) for their memory and event-loop delay.
import fs from 'node:fs';
import path from 'node:path';
import { freeLoopbackAddress } from '../../src/observability/metrics-server';
import { Findings } from '../../test/drills/kit';
import { Processes, startApiProcess, startWorkerProcess } from '../../test/drills/processes';
import type { ProbeSample } from './probe';

/** The events benchmark's clients are one organization's (up to 500): above SSE_MAX_STREAMS_PER_ORG's default. */
export const BENCH_SSE_STREAMS = 1000;

/**
 * The bench runs one organization's work against bare Temporal, which has no fair share: the organization may use
 * every activity slot, so the fair share (ORG_MAX_CONCURRENT_RUNS) does not turn throughput into queueing.
 */
export const BENCH_SHARE = { ORG_MAX_CONCURRENT_RUNS: '100' };

export interface ProcessSizes {
  /** DATABASE_POOL_SIZE of the api process. */
  apiPool: number;
  /** DATABASE_POOL_SIZE of the worker process. */
  workerPool: number;
  /** Where the api and worker write a CPU profile each when they stop (`--cpu-prof`), if anywhere. */
  profileDir?: string;
  /** The Node binaries of the api and the worker process (default: the bench's own). */
  apiNode?: string;
  workerNode?: string;
}

export interface Probed {
  /** `idle`: a Node process doing nothing, the control: its event-loop delay is the machine's share. */
  name: 'api' | 'worker' | 'idle';
  pid: number;
  /** The probe's last sample (peak RSS and event-loop delay since the last reset). */
  read(): ProbeSample | undefined;
}

export interface Production {
  baseUrl: string;
  probes: Probed[];
  /** The worker's counters of its Temporal SDK (workflow tasks, local activities, cache hits, misses, evictions). */
  workerSdkCounters(): Promise<SdkCounters>;
  /** Resets every probe (probe.ts): what `read` answers from then on covers the coming phase only. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Counters of the SDK's Prometheus export, summed over their labels (histograms: their `_count`). */
export type SdkCounters = Record<string, number>;

/** The SDK metrics a run's workflow side costs (core's names, prefix `temporal_`). */
export const SDK_COUNTERS = [
  'temporal_workflow_task_execution_latency_count',
  'temporal_workflow_task_replay_latency_count',
  'temporal_local_activity_execution_latency_count',
  'temporal_sticky_cache_hit',
  'temporal_sticky_cache_miss',
  'temporal_sticky_cache_total_forced_eviction',
  'temporal_workflow_task_queue_poll_succeed',
];

export function parseSdkCounters(text: string): SdkCounters {
  const counts: SdkCounters = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+?)(?:_total)?(?:\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m && SDK_COUNTERS.includes(m[1])) counts[m[1]] = (counts[m[1]] ?? 0) + Number(m[2]);
  }
  return counts;
}

export async function startProduction(dataDir: string, sizes: ProcessSizes): Promise<Production> {
  const procs = new Processes();
  const probeDir = fs.mkdtempSync(path.join(dataDir, 'probes-'));
  const probeEnv = (name: string) => ({
    BENCH_PROBE_FILE: path.join(probeDir, `${name}.json`),
    NODE_OPTIONS: `--require ${path.join(__dirname, 'probe.js')}`,
    ...(sizes.profileDir ? { BENCH_PROFILE_FILE: path.join(sizes.profileDir, `${name}.cpuprofile`) } : {}),
  });
  const api = await startApiProcess(
    procs,
    'api',
    {
      ...probeEnv('api'),
      DATABASE_POOL_SIZE: String(sizes.apiPool),
      SSE_KEEPALIVE_MS: '15000', // production keep-alives, as in the in-process shape
      SSE_MAX_STREAMS_PER_ORG: String(BENCH_SSE_STREAMS),
      LOG_LEVEL: 'silent',
    },
    undefined,
    sizes.apiNode,
  );
  const metricsPort = (await freeLoopbackAddress()).split(':').at(-1)!;
  const worker = await startWorkerProcess(
    procs,
    'worker',
    {
      ...probeEnv('worker'),
      WORKER_METRICS_PORT: metricsPort,
      DATABASE_POOL_SIZE: String(sizes.workerPool),
      PUBLIC_BASE_URL: api.baseUrl,
      ...BENCH_SHARE,
      LOG_LEVEL: 'silent',
    },
    undefined,
    sizes.workerNode,
  );
  // The control: what an event loop that has nothing to do is delayed by on this machine at the same moment
  // (a CPU taken by other processes), so that the api's and worker's delay can be read against it.
  const idle = procs.spawn('idle', process.execPath, ['-e', 'setInterval(() => undefined, 1 << 30)'], {
    ...process.env,
    ...probeEnv('idle'),
  });
  const children = { api: api.child, worker, idle };
  let resets = 0;
  const probe = (name: Probed['name'], pid: number): Probed => ({
    name,
    pid,
    read() {
      try {
        return JSON.parse(fs.readFileSync(path.join(probeDir, `${name}.json`), 'utf8')) as ProbeSample;
      } catch {
        return undefined;
      }
    },
  });
  const probes = [probe('api', api.child.proc.pid!), probe('worker', worker.proc.pid!), probe('idle', idle.proc.pid!)];
  return {
    baseUrl: api.baseUrl,
    probes,
    async workerSdkCounters() {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      return parseSdkCounters(await res.text());
    },
    async reset() {
      const marks = new Map<string, string>();
      for (const p of probes) {
        const child = children[p.name];
        if (!child.running) throw new Error(`our ${p.name} process has exited:\n${child.tail()}`);
        const resetFile = path.join(probeDir, `${p.name}.json.reset`);
        fs.writeFileSync(resetFile, String(++resets));
        marks.set(p.name, String(fs.statSync(resetFile).mtimeMs));
      }
      // Until each probe has written a sample taken after the reset.
      for (let i = 0; i < 60 && probes.some((p) => p.read()?.reset !== marks.get(p.name)); i++)
        await new Promise((r) => setTimeout(r, 50));
    },
    async stop() {
      if (sizes.profileDir) {
        fs.mkdirSync(sizes.profileDir, { recursive: true });
        // The probes write their profiles on their next tick (500 ms) once asked; a big one takes longer.
        for (const p of probes) fs.writeFileSync(path.join(probeDir, `${p.name}.json.stop`), '');
        const written = () => probes.every((p) => fs.existsSync(path.join(sizes.profileDir!, `${p.name}.cpuprofile`)));
        for (let i = 0; i < 100 && !written(); i++) await new Promise((r) => setTimeout(r, 100));
      }
      const f = new Findings('bench', 'none');
      await procs.stopAll(f, 10_000);
      for (const v of f.violations) console.error(`bench: ${v}`);
    },
  };
}

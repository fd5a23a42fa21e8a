// What every benchmark runs on: the test stack (embedded PostgreSQL, Temporal dev server, see
// test/harness/stack.ts) with our worker and api either in this process (shape `inprocess`, as in the tests)
// or as processes of their own (shape `production`, see production.ts), a tenant, three deployed programs (a
// trivial structure, a function, a sleeper), and the baselines' own worker on the same Temporal server (bare, and
// isolated bare: the same program through our sandbox chain).
import path from 'node:path';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { structureWithBuild, python3 } from '../../test/harness/builds';
import { SLEEP_PROGRAM } from '../../test/harness/runs';
import { newTenant, startStack, stopStack, type Stack } from '../../test/harness/stack';
import { functionShim } from '../../src/runtime/shims';
import { createBareActivities, type BareCommand, type BareFunctionCall } from '../baseline/activities';
import { setNamedPid } from './processes';
import { BENCH_SHARE, BENCH_SSE_STREAMS, Production, startProduction } from './production';
import { RunWatcher } from './run-watcher';

export type Shape = 'inprocess' | 'production';

export interface BenchOptions {
  /** Seconds of load per autocannon measurement. */
  duration: number;
  /** Sequential samples per latency measurement. */
  samples: number;
  /** Runs created back to back for the sustained-rate measurements. */
  sustained: number;
  /** Concurrency levels of the scaling curve. */
  levels: number[];
  /** Times each level of the scaling curve is measured (ours and bare interleaved; the ratio of their medians). */
  levelRepeats: number;
  /**
   * The scaling levels' memory sampler (all of /proc and the PSS of the big processes every 500 ms, read
   * synchronously by this process, which also times the runs): on, off, or on and off by turns over the repeats.
   */
  memorySampler: 'on' | 'off' | 'alternate';
  /** Runs created in the burst of the create-path benchmark (`creates`). */
  burst: number;
  /** SSE client counts of the streaming benchmark. */
  clients: number[];
  /** Where our api and worker run: in this process, or as separate processes (the goals apply to this). */
  shape: Shape;
  /** DATABASE_POOL_SIZE of the api and of the worker process (production shape). */
  apiPool: number;
  workerPool: number;
  /** Production shape: the api and worker write their CPU profiles here when they stop. */
  profileDir?: string;
  /** Production shape: the Node binaries of the api and of the worker process (default: the bench's own). */
  apiNode?: string;
  workerNode?: string;
  /** Chunks of the knowledge base the query benchmark searches. */
  kbChunks: number;
  /** Corpus sizes (chunks) of the ingestion benchmark. */
  kbIngest: number[];
  /** Workbook sizes (MB) of the large-spreadsheet memory benchmark. */
  xlsxMb: number[];
  /** Corpora of the retrieval-quality benchmark (bench/retrieval/corpora); empty: all of them. */
  corpora: string[];
  /** Local embedding models the retrieval-quality benchmark compares (names the local server serves). */
  models: string[];
}

export const DEFAULT_OPTIONS: BenchOptions = {
  duration: 10,
  samples: 30,
  sustained: 100,
  levels: [1, 10, 100, 1000],
  levelRepeats: 1,
  memorySampler: 'on',
  burst: 300,
  clients: [1, 100, 500],
  shape: 'production',
  apiPool: 10,
  workerPool: 10,
  kbChunks: 100_000,
  kbIngest: [1_000, 10_000],
  xlsxMb: [10, 100],
  corpora: [],
  models: ['all-minilm-l6-v2', 'bge-small-en-v1.5'],
};

/** The program of the run benchmarks: as small as a python program gets. */
export const TRIVIAL_PROGRAM = 'print("hello from a benchmark run")\n';
export const TRIVIAL_HANDLER = 'def handler(event):\n    return {"ok": True, "body": event["body"]}\n';

export const BARE_TASK_QUEUE = 'tarmac-bench-bare';

export interface HttpAnswer {
  status: number;
  body: any;
}

export interface BenchContext {
  stack: Stack;
  /** Our api (the stack's in-process one, or the api process). */
  baseUrl: string;
  /** The api and worker processes (production shape only). */
  production?: Production;
  options: BenchOptions;
  databaseUrl: string;
  key: string;
  structureId: string;
  functionId: string;
  sleeperId: string;
  /** Whether the isolated baseline runs here (SANDBOX=on). */
  isolated: boolean;
  /** What our worker runs for a run of `structureId`, given to the bare activity as is. */
  program: BareCommand;
  functionCall: Omit<BareFunctionCall, 'input'>;
  watcher: RunWatcher;
  /** An api call with the tenant's key. */
  http(method: string, urlPath: string, body?: unknown): Promise<HttpAnswer>;
}

export async function startContext(options: BenchOptions): Promise<{ ctx: BenchContext; stop: () => Promise<void> }> {
  // Production keep-alives (the tests use 300 ms so that they see one without waiting).
  const stack = await startStack({
    env: { SSE_KEEPALIVE_MS: '15000', SSE_MAX_STREAMS_PER_ORG: String(BENCH_SSE_STREAMS), ...BENCH_SHARE },
    inProcess: options.shape === 'inprocess',
  });
  const production =
    options.shape === 'production'
      ? await startProduction(stack.config.dataDir, {
          apiPool: options.apiPool,
          workerPool: options.workerPool,
          profileDir: options.profileDir,
          apiNode: options.apiNode,
          workerNode: options.workerNode,
        })
      : undefined;
  for (const p of production?.probes ?? []) if (p.name !== 'idle') setNamedPid(p.pid, p.name);
  const baseUrl = production?.baseUrl ?? stack.baseUrl;
  const tenant = await newTenant('bench');
  const trivial = await structureWithBuild(tenant.organizationId, {
    files: { 'structure.py': TRIVIAL_PROGRAM },
    name: 'trivial',
  });
  const fn = await structureWithBuild(tenant.organizationId, {
    files: { 'main.py': TRIVIAL_HANDLER },
    mainFile: 'main.py',
    kind: 'function',
    name: 'echo',
  });
  const sleeper = await structureWithBuild(tenant.organizationId, {
    files: { 'structure.py': SLEEP_PROGRAM },
    name: 'sleeper',
  });

  const databaseUrl = (stack.ds.options as { url: string }).url;
  const watcher = new RunWatcher(databaseUrl, stack.env.client);
  await watcher.start();

  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../baseline/workflows'),
    logger: quietLogger,
  });
  // The isolated baseline's sandbox: the stack's own, opened as a worker opens it (the same uid pool, control
  // groups and firewall), its runs in the tenant's organization group.
  const { sandbox } = stack.activityDeps;
  const [{ sandbox_index: sandboxIndex }] = await stack.ds.query(
    'SELECT sandbox_index FROM organizations WHERE organization_id = $1',
    [tenant.organizationId],
  );
  const isolation = sandbox.enabled
    ? {
        sandbox,
        placement: { gid: sandbox.gidOf(sandboxIndex), memoryBytes: stack.config.runLimits.memoryMb * 1024 * 1024 },
      }
    : undefined;
  const bareWorker = await Worker.create({
    connection: stack.env.nativeConnection,
    namespace: stack.env.namespace ?? 'default',
    taskQueue: BARE_TASK_QUEUE,
    workflowBundle,
    activities: createBareActivities(isolation),
    shutdownGraceTime: '1 second',
  });
  const bareRunning = bareWorker.run();

  const ctx: BenchContext = {
    stack,
    baseUrl,
    production,
    options,
    databaseUrl,
    key: tenant.key,
    structureId: trivial.structureId,
    functionId: fn.structureId,
    sleeperId: sleeper.structureId,
    isolated: isolation !== undefined,
    program: {
      file: python3(),
      argv: ['structure.py'],
      cwd: path.join(trivial.buildPath, 'src'),
      buildPath: trivial.buildPath,
    },
    functionCall: {
      interpreter: python3(),
      shim: functionShim('python3'),
      mainFile: 'main.py',
      handler: 'handler',
      cwd: path.join(fn.buildPath, 'src'),
      buildPath: fn.buildPath,
    },
    watcher,
    async http(method, urlPath, body) {
      const res = await fetch(baseUrl + urlPath, {
        method,
        headers: {
          authorization: `Bearer ${tenant.key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
  let stopped: Promise<void> | undefined;
  return {
    ctx,
    // Once, however many times it is called (the end of main, a signal, the time limit).
    // PostgreSQL and Temporal are stopped (and the temporary directory removed) whatever failed before.
    stop: () =>
      (stopped ??= (async () => {
        try {
          bareWorker.shutdown(); // throws when a signal has already stopped it
        } catch {
          // stopped already
        }
        await bareRunning.catch(() => undefined);
        await watcher.stop().catch(() => undefined);
        await production?.stop().catch((err) => console.error(err));
        await stopStack();
      })()),
  };
}

const quietLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  log: () => undefined,
  warn: (m: string) => console.warn(m),
  error: (m: string) => console.error(m),
};

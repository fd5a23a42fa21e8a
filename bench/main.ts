// `npm run bench [-- <name>...] [--option=value...]`: starts the real stack once (embedded PostgreSQL,
// Temporal dev server, worker and api, all on loopback; the api and worker as processes of their own in the
// default production shape), runs the chosen benchmarks (default: all, in the order below), prints each
// one's table, ratio and figure lines, then a summary of all of them, and stops. `--json` writes every
// number; bench/compare.ts prints two such files side by side.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiRead } from './api-read';
import { concurrency } from './concurrency';
import { creates } from './creates';
import { dataJobs } from './data-jobs';
import { kbIngest, kbQuery } from './knowledge-bases';
import { kbXlsxMemory } from './kb-xlsx-memory';
import { embedLocal } from './local-embeddings';
import { retrievalQuality } from './retrieval-quality';
import { eventStream } from './event-stream';
import { idempotency } from './idempotency';
import { runLatency } from './run-latency';
import { sandboxChain } from './sandbox-chain';
import { scaling } from './scaling';
import { stopStack } from '../test/harness/stack';
import { BenchContext, BenchOptions, DEFAULT_OPTIONS, startContext } from './support/context';
import { BenchReport, figureLine, printReport, ratioLine } from './support/stats';

const BENCHMARKS: Record<string, (ctx: BenchContext) => Promise<BenchReport>> = {
  'api-read': apiRead,
  runs: runLatency,
  'sandbox-chain': sandboxChain,
  events: eventStream,
  scaling,
  'data-jobs': dataJobs,
  'kb-query': kbQuery,
  'kb-ingest': kbIngest,
  'kb-xlsx-memory': kbXlsxMemory,
  idempotency,
  'embed-local': () => embedLocal({ chunks: 512 }),
  'retrieval-quality': retrievalQuality,
  concurrency,
  creates,
};

// Every benchmark at its default size takes about 30 minutes on a quiet 2-core machine.
const DEFAULT_MAX_MINUTES = 45;

const USAGE = `usage: npm run bench [-- [${Object.keys(BENCHMARKS).join('|')}]... [options]]
options (defaults in brackets):
  --duration=S      seconds of load per autocannon measurement [${DEFAULT_OPTIONS.duration}]
  --samples=N       sequential runs / executes per latency measurement [${DEFAULT_OPTIONS.samples}]
  --sustained=N     runs and executes created back to back for the sustained rates [${DEFAULT_OPTIONS.sustained}]
  --levels=A,B,...  concurrent runs of the scaling curve [${DEFAULT_OPTIONS.levels.join(',')}]
  --level-repeats=N each level of the scaling curve measured N times, ours and the baselines interleaved; its ratio
                    is that of the median time per run [${DEFAULT_OPTIONS.levelRepeats}]
  --memory-sampler=S on, off, or alternate (on and off by turns over a level's repeats: its cost on the
                    latencies, A/B) [${DEFAULT_OPTIONS.memorySampler}]
  --burst=N         runs created at once in the creates benchmark (our worker stopped) [${DEFAULT_OPTIONS.burst}]
  --clients=A,B,... SSE clients of the streaming benchmark [${DEFAULT_OPTIONS.clients.join(',')}]
  --shape=S         inprocess (api and worker in this process, as in the tests) or production (each a
                    process of its own with its own pool; the goals apply to this) [${DEFAULT_OPTIONS.shape}]
  --api-pool=N      DATABASE_POOL_SIZE of the api process (production shape) [${DEFAULT_OPTIONS.apiPool}]
  --worker-pool=N   DATABASE_POOL_SIZE of the worker process (production shape) [${DEFAULT_OPTIONS.workerPool}]
  --profile-dir=D   production shape: the api and worker processes write D/api.cpuprofile and
                    D/worker.cpuprofile (their whole run) at the end, and sampling heap profiles (.heapprofile:
                    every allocation); read them with dist/bench/profile-top.js D
  --api-node=PATH   production shape: the Node binary of the api process [npm start's: the pinned Node of
                    tools/obtain-node.sh; --api-node=$(command -v node) for the bench's]
  --worker-node=PATH production shape: the Node binary of the worker process [npm start's, as the api's]
  --kb-chunks=N     chunks of the knowledge base kb-query searches [${DEFAULT_OPTIONS.kbChunks}]
  --kb-ingest=A,B   corpus sizes (chunks) kb-ingest ingests [${DEFAULT_OPTIONS.kbIngest.join(',')}]
  --xlsx-mb=A,B     workbook sizes (MB) kb-xlsx-memory ingests [${DEFAULT_OPTIONS.xlsxMb.join(',')}]
  --corpora=A,B     corpora of retrieval-quality (bench/retrieval/corpora) [all]
  --models=A,B      local embedding models retrieval-quality compares [${DEFAULT_OPTIONS.models.join(',')}]
  --json[=FILE]     also write every number to FILE [bench-<shape>-<time>.json]
  --max-minutes=M   stop everything and exit 1 after M minutes, whatever is running [${DEFAULT_MAX_MINUTES}]`;

function parseArgs(argv: string[]): { names: string[]; options: BenchOptions; json?: string; maxMinutes: number } {
  const options = { ...DEFAULT_OPTIONS };
  const names: string[] = [];
  let json: string | undefined;
  let maxMinutes = DEFAULT_MAX_MINUTES;
  const list = (v: string) =>
    v
      .split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
  for (const arg of argv) {
    if (arg === '--json') {
      json = '';
      continue;
    }
    const m = /^--([a-z-]+)=(.+)$/.exec(arg);
    if (!m) {
      if (!BENCHMARKS[arg]) throw new Error(`unknown benchmark ${JSON.stringify(arg)}\n${USAGE}`);
      names.push(arg);
      continue;
    }
    const [, key, value] = m;
    if (key === 'duration' || key === 'samples' || key === 'sustained' || key === 'burst')
      options[key] = Math.max(1, Number(value) || 0);
    else if (key === 'levels' || key === 'clients') options[key] = list(value);
    else if (key === 'kb-chunks') options.kbChunks = Math.max(100, Number(value) || 0);
    else if (key === 'kb-ingest') options.kbIngest = list(value);
    else if (key === 'xlsx-mb') options.xlsxMb = list(value);
    else if (key === 'corpora' || key === 'models') options[key] = value.split(',').filter(Boolean);
    else if (key === 'json') json = value;
    else if (key === 'shape' && (value === 'inprocess' || value === 'production')) options.shape = value;
    else if (key === 'profile-dir') options.profileDir = path.resolve(value);
    else if (key === 'api-node' || key === 'worker-node')
      options[key === 'api-node' ? 'apiNode' : 'workerNode'] = path.resolve(value);
    else if (key === 'memory-sampler' && (value === 'on' || value === 'off' || value === 'alternate'))
      options.memorySampler = value;
    else if (key === 'level-repeats') options.levelRepeats = Math.max(1, Number(value) || 0);
    else if (key === 'api-pool') options.apiPool = Math.max(1, Number(value) || 0);
    else if (key === 'worker-pool') options.workerPool = Math.max(1, Number(value) || 0);
    else if (key === 'max-minutes') maxMinutes = Math.max(1, Number(value) || DEFAULT_MAX_MINUTES);
    else throw new Error(`unknown option --${key}\n${USAGE}`);
  }
  return { names: names.length ? names : Object.keys(BENCHMARKS), options, json, maxMinutes };
}

/** The api's and the worker's Node as `npm start` runs them (tools/obtain-node.sh, src/cli/start/obtain.ts); the bench's if it cannot. */
function productionNode(): string {
  try {
    const out = execFileSync('bash', [path.join(__dirname, '..', '..', 'tools', 'obtain-node.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return out.trim().split('\n').at(-1)!;
  } catch (err) {
    console.log(
      `tools/obtain-node.sh failed (${(err as Error).message.split('\n')[0]}): the api and worker run on ${process.version}`,
    );
    return process.execPath;
  }
}

/** The version of the Node binary at `file` (this process's when none is given). */
function nodeVersion(file?: string): string {
  return file ? execFileSync(file, ['--version'], { encoding: 'utf8' }).trim() : process.version;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) return console.log(USAGE);
  const { names, options, json: jsonArg, maxMinutes } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const json =
    jsonArg === '' ? `bench-${options.shape}-${new Date().toISOString().replace(/[:.]/g, '-')}.json` : jsonArg;
  const loadBefore = os.loadavg();
  const reports: BenchReport[] = [];
  const failed: Array<{ name: string; error: string }> = [];
  // Written after each benchmark, so that a run stopped (or failed) midway keeps what it measured.
  const writeJson = (end: 'complete' | string) => {
    if (!json) return;
    fs.writeFileSync(
      json,
      JSON.stringify(
        {
          at: new Date().toISOString(),
          end,
          shape: options.shape,
          options,
          machine: { cpu: os.cpus()[0]?.model, cpus: os.cpus().length, memory: os.totalmem(), node: process.version },
          load: { before: loadBefore, after: os.loadavg() },
          seconds: (Date.now() - started) / 1000,
          reports: reports.map(({ tables, ...r }) => r),
          failed,
        },
        null,
        2,
      ),
    );
  };
  // Whatever happens (a signal, a benchmark that hangs), PostgreSQL and Temporal are stopped with us.
  let stopAll: () => Promise<void> = stopStack;
  const abort = (why: string, code: number) => {
    console.error(`\n${why}: stopping the stack`);
    writeJson(`stopped: ${why}`);
    if (json) console.error(`wrote ${json} (what was measured before the stop)`);
    // Calls still in flight fail once their connections close; that is expected now, not a crash.
    process.on('uncaughtException', () => undefined);
    process.on('unhandledRejection', () => undefined);
    stopAll()
      .catch((err) => console.error(err))
      .finally(() => process.exit(code));
  };
  process.once('SIGINT', () => abort('SIGINT', 130));
  process.once('SIGTERM', () => abort('SIGTERM', 143));
  setTimeout(() => abort(`still running after --max-minutes=${maxMinutes}`, 1), maxMinutes * 60_000).unref();
  if (options.shape === 'production') {
    let pinned: string | undefined;
    options.apiNode ??= pinned ??= productionNode();
    options.workerNode ??= pinned ??= productionNode();
  }
  console.log(`tarmac benchmarks: ${names.join(', ')}`);
  console.log(
    `machine: ${os.cpus()[0]?.model} x${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    options.shape === 'production'
      ? `shape production: api and worker processes (pools ${options.apiPool} and ${options.workerPool}; node ${nodeVersion(options.apiNode)} and ${nodeVersion(options.workerNode)}), the load generator and the bare baselines in this process`
      : 'shape inprocess: api, worker, bare baselines and load generator in this process (one pool of 10)',
  );
  console.log('starting the stack (embedded PostgreSQL, Temporal dev server, worker, api)...');
  const { ctx, stop } = await startContext(options);
  stopAll = stop;
  try {
    for (const name of names) {
      const t0 = Date.now();
      console.log(`\n# ${name}`);
      let report: BenchReport;
      try {
        report = await BENCHMARKS[name](ctx);
      } catch (err) {
        // One benchmark that fails does not lose the others: it is reported, and the run exits 1 at the end.
        const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        console.error(`${name} FAILED: ${error}`);
        failed.push({ name, error });
        writeJson('running');
        continue;
      }
      printReport(report);
      // The load average says how much else ran meanwhile (other processes share the machine).
      console.log(
        `(${name}: ${((Date.now() - t0) / 1000).toFixed(0)} s, load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')})`,
      );
      reports.push(report);
      writeJson('running');
    }
  } finally {
    // Calls still in flight (a stuck run's result, say) fail once the connections close: expected now.
    process.on('uncaughtException', () => undefined);
    process.on('unhandledRejection', () => undefined);
    await stop();
  }
  console.log('\n# summary');
  for (const r of reports.flatMap((x) => x.ratios)) console.log(ratioLine(r));
  for (const f of reports.flatMap((x) => x.figures ?? [])) console.log(figureLine(f));
  console.log(
    `total ${((Date.now() - started) / 1000).toFixed(0)} s, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const f of failed) console.log(`FAILED ${f.name}`);
  writeJson('complete');
  if (json) console.log(`wrote ${json}`);
  if (failed.length) process.exitCode = 1;
}

main().then(
  () => process.exit(), // process.exitCode: 1 when a benchmark failed
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);

// 4. Scaling curve: the run benchmark with 1, 10, 100, 1000 runs in flight at once (all created in a
// burst), ours and the baselines (bare, isolated bare), with wall time, time per run, the machine's CPU per run,
// latency, the create calls' latency and failures (the burst goals), and the memory (PSS) of this process, our
// api and worker processes (production shape), PostgreSQL and the Temporal dev server, with the api's and
// worker's event-loop delay (probe.ts). Each level is bounded in time (a deadline, and 30 s
// without any of its runs ending); runs that have not ended by then are counted, and the level is reported.
import type { BenchContext } from './support/context';
import type { ProbeSample } from './support/probe';
import {
  cpuNow,
  cpuSeconds,
  cpuSplit,
  Group,
  machineCpuSeconds,
  mb,
  memoryNow,
  sampleMemory,
  threadCpuSeconds,
  type WorkerThread,
} from './support/processes';
import {
  BASELINE_NAME,
  baselinesOf,
  outcomesOtherThanSuccess,
  showFailedRuns,
  RunTiming,
  Started,
  startOne,
  type Which,
} from './support/runs';
import { stepsOf } from './support/run-steps';
import { BenchReport, Figure, figure, pool, Ratio, ratiosOf, sleep, summarize, table } from './support/stats';

/** Create calls in flight while a level's runs are created (the runs themselves are then all in flight). */
export const CREATE_CONCURRENCY = 100;
/** A level may take this long per run plus a minute before it is cut short. */
const LEVEL_MS_PER_RUN = 500;
/** ... or once no run of it has ended for this long (one stuck run must not hold the curve for minutes). */
const LEVEL_QUIET_MS = 30_000;

interface Level {
  which: Which;
  runs: number;
  /** Which of the level's repeats (--level-repeats), from 0. */
  repeat: number;
  /** Whether memory was sampled over it (--memory-sampler). */
  sampled: boolean;
  finished: number;
  succeeded: number;
  /** Create calls that failed (their messages, first few). */
  createErrors: string[];
  /** Outcomes other than SUCCEEDED, counted ("2 lost (QUEUED, workflow ended)"). */
  outcomes: string;
  wallMs: number;
  createMs: number;
  latency: ReturnType<typeof summarize>;
  /** Each create call, answered or failed (ms). */
  createLatency: ReturnType<typeof summarize>;
  /** CPU time of our api process while the level's runs were being created, per create call (µs; production shape). */
  apiCpuPerCreate?: number;
  /** CPU time of our worker process over the level (creates to the last run's end), per run (ms; production shape). */
  workerCpuPerRun?: number;
  /** The same, by kind of thread (ms per run; production shape). */
  workerThreadsPerRun?: Record<WorkerThread, number>;
  /**
   * CPU time per run over the level (ms): the whole machine's, each part of the stack's (their processes' own
   * user and system time), and the rest (the machine's minus the parts: sandboxes, programs, kernel threads).
   */
  cpuPerRun: Record<'machine' | 'api' | 'worker' | 'postgres' | 'temporal' | 'bench' | 'rest', number>;
  /** The worker's Temporal SDK counters over the level, per run (production shape; production.ts SDK_COUNTERS). */
  workerSdkPerRun?: Record<string, number>;
  /** Ours: the runs that succeeded (for the step breakdown of the 1-in-flight level). */
  succeededRuns: RunTiming[];
  /** The api's and worker's probes over the level (production shape). */
  probes: Partial<Record<'api' | 'worker' | 'idle', ProbeSample>>;
  before: Record<Group, number>;
  peak: Record<Group, number>;
}

const WORKER_THREADS: WorkerThread[] = ['main', 'workflows', 'v8', 'core', 'pool', 'other'];

const unfinishedOf = (l: Level) => l.runs - l.finished - l.createErrors.length;
const nameOf = (which: Which) => (which === 'ours' ? which : BASELINE_NAME[which]);

async function level(ctx: BenchContext, which: Which, runs: number, repeat: number, sampled: boolean): Promise<Level> {
  await ctx.production?.reset();
  const before = memoryNow();
  const sampler = sampled ? sampleMemory(500) : { stop: () => before };
  const t0 = Date.now();
  const createTimes: number[] = [];
  const deadline = t0 + 60_000 + runs * LEVEL_MS_PER_RUN;
  const start = () => startOne(ctx, which, Math.max(1, deadline - Date.now()));
  const createErrors: string[] = [];
  const apiPid = which === 'ours' ? ctx.production?.probes.find((p) => p.name === 'api')?.pid : undefined;
  const apiCpuBefore = apiPid ? cpuSeconds(apiPid) : 0;
  const workerPid = which === 'ours' ? ctx.production?.probes.find((p) => p.name === 'worker')?.pid : undefined;
  const workerCpuBefore = workerPid ? cpuSeconds(workerPid) : 0;
  const workerThreadsBefore = workerPid ? threadCpuSeconds(workerPid) : undefined;
  const sdkBefore = workerPid ? await ctx.production!.workerSdkCounters() : undefined;
  const [machineBefore, partsBefore] = [machineCpuSeconds(), cpuNow()];
  const started = (
    await pool(Array.from({ length: runs }), CREATE_CONCURRENCY, async (): Promise<Started | undefined> => {
      const c0 = Date.now();
      try {
        return await start();
      } catch (err) {
        createErrors.push((err as Error).message);
        return undefined;
      } finally {
        createTimes.push(Date.now() - c0);
      }
    })
  ).filter((s): s is Started => s !== undefined);
  const createMs = Date.now() - t0;
  const apiCpuPerCreate = apiPid ? ((cpuSeconds(apiPid) - apiCpuBefore) * 1e6) / runs : undefined;
  const all: RunTiming[] = [];
  let lastEnd = Date.now();
  for (const s of started)
    void s.done.then((t) => {
      all.push(t);
      lastEnd = Date.now();
    });
  while (all.length < started.length && Date.now() - lastEnd < LEVEL_QUIET_MS) await sleep(250);
  const peak = sampler.stop();
  const workerCpuPerRun = workerPid ? ((cpuSeconds(workerPid) - workerCpuBefore) * 1e3) / runs : undefined;
  const workerThreadsAfter = workerPid ? threadCpuSeconds(workerPid) : undefined;
  const workerThreadsPerRun =
    workerThreadsBefore && workerThreadsAfter
      ? (Object.fromEntries(
          Object.entries(workerThreadsAfter).map(([k, v]) => [
            k,
            ((v - workerThreadsBefore[k as WorkerThread]) * 1e3) / runs,
          ]),
        ) as Record<WorkerThread, number>)
      : undefined;
  const cpuPerRun = cpuSplit(machineCpuSeconds() - machineBefore, partsBefore, cpuNow(), runs);
  const probes = Object.fromEntries((ctx.production?.probes ?? []).map((p) => [p.name, p.read()]));
  const sdkAfter = sdkBefore ? await ctx.production!.workerSdkCounters() : undefined;
  const workerSdkPerRun =
    sdkBefore && sdkAfter
      ? Object.fromEntries(Object.keys(sdkAfter).map((k) => [k, (sdkAfter[k] - (sdkBefore[k] ?? 0)) / runs]))
      : undefined;
  // Ended with a terminal status (lost and stuck runs are counted in `outcomes`, not timed).
  const done = all.filter((t) => !t.outcome.startsWith('stuck') && !t.outcome.startsWith('lost'));
  const ok = all.filter((t) => t.ok);
  await showFailedRuns(ctx, all);
  return {
    which,
    runs,
    repeat,
    sampled,
    finished: done.length,
    succeeded: ok.length,
    createErrors,
    outcomes:
      [
        outcomesOtherThanSuccess(all),
        started.length > all.length
          ? `${started.length - all.length} not ended ${LEVEL_QUIET_MS / 1000} s after the last one that did`
          : '',
      ]
        .filter((x) => x && x !== 'none')
        .join(', ') || 'none',
    wallMs: (done.length ? Math.max(...done.map((t) => t.t0 + t.succeeded)) : Date.now()) - t0,
    createMs,
    latency: summarize(ok.map((t) => t.succeeded)),
    createLatency: summarize(createTimes),
    apiCpuPerCreate,
    workerCpuPerRun,
    workerThreadsPerRun,
    cpuPerRun,
    workerSdkPerRun,
    succeededRuns: ok,
    probes,
    before,
    peak,
  };
}

export async function scaling(ctx: BenchContext): Promise<BenchReport> {
  const levels: Level[] = [];
  for (const runs of ctx.options.levels) {
    for (let repeat = 0; repeat < ctx.options.levelRepeats; repeat++) {
      for (const which of ['ours', ...baselinesOf(ctx)] as const) {
        const mode = ctx.options.memorySampler;
        levels.push(await level(ctx, which, runs, repeat, mode === 'on' || (mode === 'alternate' && repeat % 2 === 0)));
        await sleep(1_000); // let the previous level's stragglers (cleanup, GC) settle
      }
    }
  }
  const rows = levels.map((l) => {
    const grown = (Object.keys(l.peak) as Group[]).reduce((s, g) => s + Math.max(0, l.peak[g] - l.before[g]), 0);
    return [
      l.sampled ? nameOf(l.which) : `${nameOf(l.which)} (no memory sampler)`,
      String(l.runs),
      `${l.succeeded}/${l.runs}${unfinishedOf(l) ? ` (${unfinishedOf(l)} unfinished)` : ''}${l.createErrors.length ? ` (${l.createErrors.length} not created)` : ''}`,
      l.wallMs / 1000,
      (l.runs / l.wallMs) * 1000,
      l.wallMs / l.runs,
      l.latency.p50,
      l.latency.p99,
      l.createLatency.p99,
      mb(l.peak.node),
      mb(l.peak.api),
      mb(l.peak.worker),
      l.probes.api?.delayP99 ?? NaN,
      l.probes.worker?.delayP99 ?? NaN,
      mb(l.peak.postgres),
      mb(l.peak.temporal),
      mb(l.peak.programs),
      grown / l.runs / 1024,
    ];
  });
  const ratios: Ratio[] = [];
  // Over --level-repeats measurements of a level: the median of each (time per run, the machine's CPU per run).
  const medianOf = (which: Which, runs: number, sampled: boolean, of: (l: Level) => number) => {
    const measured = levels.filter((l) => l.which === which && l.runs === runs && l.sampled === sampled);
    return measured.length ? summarize(measured.map(of)).p50 : undefined;
  };
  for (const runs of ctx.options.levels) {
    for (const sampled of [true, false]) {
      if (!levels.some((l) => l.runs === runs && l.sampled === sampled)) continue;
      const at = `at ${runs} in flight${sampled ? '' : ' (no memory sampler)'}`;
      for (const [metric, unit, of] of [
        ['time per run', 'ms', (l: Level) => l.wallMs / l.runs],
        ["machine's CPU per run", 'ms', (l: Level) => l.cpuPerRun.machine],
      ] as const)
        ratios.push(
          ...ratiosOf('scaling', `${metric} ${at}`, unit, medianOf('ours', runs, sampled, of)!, {
            bare: medianOf('bare', runs, sampled, of)!,
            isolated: medianOf('isolated', runs, sampled, of),
          }),
        );
    }
  }
  // The goals of issue 16: no failed create in the burst of 1,000 (the largest level) and its creates answered
  // within 500 ms at p99; the worker under 500 MB with 100 runs in flight; event loops under 20 ms at p99.
  const figures: Figure[] = [];
  const largest = levels.filter((l) => l.which === 'ours' && l.repeat === 0).at(-1);
  if (largest) {
    const goal = largest.runs >= 1000;
    figures.push(
      figure(
        'scaling',
        `create calls not answered 201, burst of ${largest.runs}`,
        largest.createErrors.length,
        '',
        goal ? { max: 0 } : undefined,
      ),
      figure(
        'scaling',
        `create p99, burst of ${largest.runs}`,
        largest.createLatency.p99,
        'ms',
        goal ? { max: 500, below: true } : undefined,
      ),
    );
    // The burst against the baselines' own starts at the same level (issue 48: within 1.2× of bare's p99).
    const createP99Of = (which: Which) =>
      levels.find((l) => l.which === which && l.repeat === 0 && l.runs === largest.runs)?.createLatency.p99;
    ratios.push(
      ...ratiosOf('scaling', `create p99, burst of ${largest.runs}`, 'ms', largest.createLatency.p99, {
        bare: createP99Of('bare')!,
        isolated: createP99Of('isolated'),
      }),
    );
    // What a loaded machine does not distort: the api's own CPU time per create.
    if (largest.apiCpuPerCreate !== undefined)
      figures.push(
        figure('scaling', `api CPU per create call, burst of ${largest.runs}`, largest.apiCpuPerCreate, 'µs'),
      );
  }
  for (const l of levels.filter((x) => x.which === 'ours' && x.repeat === 0)) {
    const goal = l.runs === 100;
    const at = `${l.runs} runs in flight`;
    if (l.probes.worker)
      figures.push(
        figure(
          'scaling',
          `worker peak RSS, ${at}`,
          mb(l.probes.worker.peakRss),
          'MB',
          goal ? { max: 500, below: true } : undefined,
        ),
        figure(
          'scaling',
          `worker event-loop delay p99, ${at}`,
          l.probes.worker.delayP99,
          'ms',
          goal ? { max: 20, below: true } : undefined,
        ),
        figure('scaling', `worker longest GC pause, ${at}`, l.probes.worker.gcMax, 'ms'),
      );
    // What a loaded machine does not distort: the worker's own CPU time per run.
    if (l.workerCpuPerRun !== undefined)
      figures.push(figure('scaling', `worker CPU per run, ${at}`, l.workerCpuPerRun, 'ms'));
    for (const [name, perRun] of Object.entries(l.workerSdkPerRun ?? {}))
      figures.push(figure('scaling', `worker ${name.replace(/^temporal_/, '')} per run, ${at}`, perRun, ''));
    if (l.probes.worker)
      figures.push(
        figure('scaling', `worker SQL statements per run, ${at}`, l.probes.worker.queries / l.runs, ''),
        figure('scaling', `worker gRPC calls per run, ${at}`, l.probes.worker.grpcCalls / l.runs, ''),
        // Which pauses make the worker's loop delay: each kind's count, its pause time per run and its longest.
        ...(['minor', 'major'] as const).flatMap((kind) => {
          const pauses = l.probes.worker!.gc?.[kind];
          return pauses
            ? [
                figure('scaling', `worker ${kind} GC pauses, ${at}`, pauses.count, ''),
                figure('scaling', `worker ${kind} GC pause time per run, ${at}`, pauses.totalMs / l.runs, 'ms'),
                figure('scaling', `worker longest ${kind} GC pause, ${at}`, pauses.maxMs, 'ms'),
              ]
            : [];
        }),
      );
    if (l.probes.idle)
      figures.push(
        figure(
          'scaling',
          `event-loop delay p99 of an idle process (the machine's share), ${at}`,
          l.probes.idle.delayP99,
          'ms',
        ),
      );
    if (l.probes.api)
      figures.push(
        figure(
          'scaling',
          `api event-loop delay p99, ${at}`,
          l.probes.api.delayP99,
          'ms',
          goal ? { max: 20, below: true } : undefined,
        ),
      );
  }
  // One run at a time (the 1-in-flight level, over its repeats): where its time goes, as in `runs`.
  const singleOf = (sampled: boolean) =>
    levels.filter((l) => l.which === 'ours' && l.runs === 1 && l.sampled === sampled).flatMap((l) => l.succeededRuns);
  const breakdowns = await Promise.all(
    [true, false].map(async (sampled) => {
      const runs = singleOf(sampled);
      return { sampled, runs: runs.length, steps: runs.length ? await stepsOf(ctx, runs) : [] };
    }),
  );
  return {
    name: 'scaling',
    figures,
    tables: [
      ...breakdowns
        .filter((b) => b.runs)
        .map((b) =>
          table(
            `scaling: where the time of ours goes at 1 in flight (${b.runs} runs${b.sampled ? '' : ', no memory sampler'}, per run, ms)`,
            ['step', 'p50', 'p99'],
            b.steps.map(([name, v]) => {
              const s = summarize(v);
              return [name, s.p50, s.p99];
            }),
          ),
        ),
      table(
        'scaling: CPU time per run over each level (ms), the whole machine and its parts; "rest" = the machine minus the parts (sandboxes, programs, kernel)',
        ['path', 'N', 'machine', 'api', 'worker', 'PostgreSQL', 'Temporal', 'bench', 'rest'],
        levels.map((l) => [
          nameOf(l.which),
          String(l.runs),
          ...(['machine', 'api', 'worker', 'postgres', 'temporal', 'bench', 'rest'] as const).map(
            (k) => l.cpuPerRun[k],
          ),
        ]),
      ),
      table(
        "scaling: our worker's CPU time per run by thread (ms): main = the event loop (activities, the SDK's JS side), workflows = the SDK's workflow thread, v8 = GC and compilation threads, core = the SDK's Rust core, pool = libuv's thread pool",
        ['N', ...WORKER_THREADS],
        levels.flatMap((l) =>
          l.workerThreadsPerRun ? [[String(l.runs), ...WORKER_THREADS.map((k) => l.workerThreadsPerRun![k])]] : [],
        ),
      ),
      table(
        `scaling: N runs of the trivial program created in a burst (${CREATE_CONCURRENCY} create calls in flight), memory = peak PSS`,
        [
          'path',
          'N',
          'succeeded',
          'wall s',
          'runs/s',
          'ms/run',
          'p50 ms',
          'p99 ms',
          'create p99',
          'bench MB',
          'api MB',
          'worker MB',
          'api loop p99',
          'wrk loop p99',
          'pg MB',
          'temporal MB',
          'programs MB',
          'grown KB/run',
        ],
        rows,
      ),
    ],
    ratios,
    notes: [
      ctx.production
        ? '"bench" is this process (the baselines\' worker, load generator); "api" and "worker" our processes; "programs" the python processes alive at the peak'
        : '"bench" is this process: api, worker, the baselines\' worker and the load generator (as in the test stack); "programs" the python processes alive at the peak',
      '"create p99": each create call of the level, answered or failed; "loop p99": event-loop delay over the level (production shape)',
      '"grown KB/run": growth of all groups over the level (peak minus before), divided by N; small N is noise',
      'the worker runs at most 100 activities at once (Temporal SDK default), so beyond 100 runs wait in the task queue',
      ...levels
        .filter((l) => l.outcomes !== 'none')
        .map((l) => `${nameOf(l.which)} at ${l.runs}: not succeeded: ${l.outcomes}`),
      ...levels
        .filter((l) => l.createErrors.length)
        .map(
          (l) =>
            `${nameOf(l.which)} at ${l.runs}: ${l.createErrors.length} create calls failed, e.g. ${l.createErrors[0]}`,
        ),
    ],
    data: {
      levels: levels.map(({ succeededRuns: _, ...l }) => ({
        ...l,
        createErrors: l.createErrors.length,
        latency: l.latency,
        perRunMs: l.wallMs / l.runs,
        createPerS: (l.runs / l.createMs) * 1000,
      })),
    },
  };
}

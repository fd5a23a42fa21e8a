// 2. Run latency: a structure run of a trivial python program against a bare Temporal workflow spawning the
// same program in one activity, and against isolated bare (the same, through our sandbox chain); sequential
// latency (create → RUNNING, create → SUCCEEDED) with a step breakdown of ours, sustained runs created and
// completed per second, and the same for a function execute (POST /api/functions/{id}/execute against a
// baseline's workflow running the same handler through the same shim).
import { randomUUID } from 'node:crypto';
import { BARE_TASK_QUEUE, BenchContext } from './support/context';
import {
  type Baseline,
  baselinesOf,
  oneRun,
  outcomesOtherThanSuccess,
  RunTiming,
  startBare,
  startOurs,
} from './support/runs';
import { stepsOf } from './support/run-steps';
import { BenchReport, Figure, figure, fmt, pool, Ratio, ratiosOf, sleep, summarize, table } from './support/stats';

/** In-flight create calls of the sustained measurements (client calls from this process, ours and bare alike). */
const CONCURRENCY = 10;
/** A run of the trivial program that has not ended after this long is reported as stuck, not waited for. */
const RUN_TIMEOUT_MS = 60_000;

async function sequential(ctx: BenchContext) {
  const ours: RunTiming[] = [];
  const baselines = baselinesOf(ctx);
  const based = Object.fromEntries(baselines.map((b) => [b, [] as RunTiming[]])) as Partial<
    Record<Baseline, RunTiming[]>
  >;
  await oneRun(ctx, 'ours', RUN_TIMEOUT_MS); // warm-up: first-use costs (bundle load, connections) are not what we measure
  for (const b of baselines) await oneRun(ctx, b, RUN_TIMEOUT_MS);
  // Our worker's SQL statements over the sequence (the baselines' runs are not its), per run of ours.
  await ctx.production?.reset();
  for (let i = 0; i < ctx.options.samples; i++) {
    // Interleaved, so that drift in machine load hits all alike.
    ours.push(await oneRun(ctx, 'ours', RUN_TIMEOUT_MS));
    for (const b of baselines) based[b]!.push(await oneRun(ctx, b, RUN_TIMEOUT_MS));
  }
  const worker = ctx.production?.probes.find((p) => p.name === 'worker');
  // The probe writes its sample every 500 ms: one taken after the last run ended.
  if (worker) await sleep(1_200);
  const sample = worker?.read();
  const workerQueries = sample === undefined ? undefined : sample.queries / ctx.options.samples;
  return { ours, bare: based.bare!, isolated: based.isolated, workerQueries };
}

/**
 * POSTs `n` runs, CONCURRENCY in flight, from this process as bare's starts are made (autocannon's `amount`
 * mode ends on its 1 s tick: every rate it gave was a number of runs over a whole number of seconds, plus its
 * worker thread's start). Answers the runs created (their ends are followed) and how long creating took.
 */
async function postRuns(ctx: BenchContext, n: number) {
  const t0 = Date.now();
  const answers = await pool(Array.from({ length: n }), CONCURRENCY, () =>
    startOurs(ctx, RUN_TIMEOUT_MS + n * 500).then(
      (started) => ({ started }),
      (err: Error) => ({ failed: err.message }),
    ),
  );
  const ms = Date.now() - t0;
  const started = answers.flatMap((a) => ('started' in a ? [a.started] : []));
  return { t0, ms, started, failed: n - started.length };
}

/**
 * The control of the creation rate (production shape): `n` runs created while our worker process is stopped
 * (SIGSTOP), so that creating competes with no execution for the machine's CPUs; they run once it continues,
 * and are waited for. Answers runs created per second.
 */
async function createdWithWorkerPaused(ctx: BenchContext, n: number): Promise<number | undefined> {
  const worker = ctx.production?.probes.find((p) => p.name === 'worker');
  if (!worker) return undefined;
  process.kill(worker.pid, 'SIGSTOP');
  let created;
  try {
    created = await postRuns(ctx, n);
  } finally {
    process.kill(worker.pid, 'SIGCONT');
  }
  await Promise.all(created.started.map((s) => s.done));
  return (created.started.length / created.ms) * 1000;
}

async function sustainedRuns(ctx: BenchContext) {
  const n = ctx.options.sustained;
  // Ours: `n` POSTs, CONCURRENCY in flight.
  const ours = await postRuns(ctx, n);
  const endsOurs = await Promise.all(ours.started.map((s) => s.done));
  const doneOurs = Math.max(...endsOurs.filter((e) => e.ok).map((e) => e.t0 + e.succeeded)) - ours.t0;

  // Each baseline: the same number of workflow starts, CONCURRENCY in flight.
  const baseline = async (which: Baseline) => {
    const b0 = Date.now();
    const started = await pool(Array.from({ length: n }), CONCURRENCY, () =>
      startBare(ctx, RUN_TIMEOUT_MS + n * 500, which),
    );
    const createdMs = Date.now() - b0;
    const ends = await Promise.all(started.map((s) => s.done));
    const doneMs = Math.max(...ends.filter((e) => e.ok).map((e) => e.t0 + e.succeeded)) - b0;
    return {
      created: n,
      failed: 0,
      createdPerS: (n / createdMs) * 1000,
      completedPerS: (ends.filter((e) => e.ok).length / doneMs) * 1000,
      ok: ends.filter((e) => e.ok).length,
      stuck: ends.filter((e) => !e.ok).map((e) => e.outcome),
    };
  };
  const bare = await baseline('bare');
  const isolated = ctx.isolated ? await baseline('isolated') : undefined;
  const createdPerSWorkerPaused = await createdWithWorkerPaused(ctx, n);
  return {
    createdPerSWorkerPaused,
    ours: {
      created: ours.started.length,
      failed: ours.failed,
      createdPerS: (ours.started.length / ours.ms) * 1000,
      completedPerS: (endsOurs.filter((e) => e.ok).length / doneOurs) * 1000,
      ok: endsOurs.filter((e) => e.ok).length,
      stuck: endsOurs.filter((e) => !e.ok).map((e) => e.outcome),
    },
    bare,
    isolated,
  };
}

/** One function execute as the caller sees it. */
interface Execute {
  ms: number;
  /** Answered 200 with the handler's result (ours), or the workflow's result (bare). */
  ok: boolean;
  /** For the others: what happened ("202, stuck QUEUED"). */
  outcome: string;
  /** Date.now() when it was answered. */
  at: number;
}

async function bareExecute(ctx: BenchContext, body: unknown, which: Baseline = 'bare'): Promise<Execute> {
  const t0 = Date.now();
  const done = ctx.stack.env.client.workflow
    .execute(which === 'bare' ? 'bareFunctionWorkflow' : 'isolatedFunctionWorkflow', {
      taskQueue: BARE_TASK_QUEUE,
      workflowId: `bench-${which}-fn-${randomUUID()}`,
      args: [{ ...ctx.functionCall, input: { body, query_params: {} } }],
    })
    .then(
      () => 'ok',
      (err: Error) => `failed: ${err.message}`,
    );
  const outcome = await Promise.race([done, sleep(RUN_TIMEOUT_MS).then(() => 'stuck')]);
  return { ms: Date.now() - t0, ok: outcome === 'ok', outcome, at: Date.now() };
}

async function oursExecute(ctx: BenchContext, body: unknown): Promise<Execute> {
  const t0 = Date.now();
  const res = await ctx.http('POST', `/api/functions/${ctx.functionId}/execute`, body);
  if (res.status === 200) return { ms: Date.now() - t0, ok: true, outcome: '200', at: Date.now() };
  if (res.status !== 202)
    return { ms: Date.now() - t0, ok: false, outcome: `${res.status} ${res.body?.type}`, at: Date.now() };
  // Not ended within FUNCTION_EXECUTE_TIMEOUT_SECONDS: followed a while longer, to say how it ended.
  const end = await ctx.watcher.ended(res.body.function_run_id, RUN_TIMEOUT_MS);
  const how = end.lost ? 'lost, workflow ended, row ' : end.timedOut ? 'stuck ' : 'then ';
  return { ms: end.seenAt - t0, ok: false, outcome: `202, ${how}${end.status}`, at: end.seenAt };
}

function outcomes(list: Execute[]): string {
  const counts = new Map<string, number>();
  for (const e of list) if (!e.ok) counts.set(e.outcome, (counts.get(e.outcome) ?? 0) + 1);
  return [...counts.entries()].map(([k, v]) => `${v}× ${k}`).join(', ') || 'none';
}

/** `n` executes with CONCURRENCY in flight; the rate counts successful answers up to the last one. */
async function loaded(n: number, run: () => Promise<Execute>) {
  const t0 = Date.now();
  const all = await pool(Array.from({ length: n }), CONCURRENCY, run);
  const ok = all.filter((e) => e.ok);
  const last = ok.length ? Math.max(...ok.map((e) => e.at)) : Date.now();
  return {
    perS: (ok.length / (last - t0)) * 1000,
    ...summarize(ok.map((e) => e.ms)),
    ok: ok.length,
    other: outcomes(all),
  };
}

async function functions(ctx: BenchContext) {
  const iso = ctx.isolated;
  await oursExecute(ctx, { warm: true });
  await bareExecute(ctx, { warm: true });
  if (iso) await bareExecute(ctx, { warm: true }, 'isolated');
  const seqOurs: Execute[] = [];
  const seqBare: Execute[] = [];
  const seqIsolated: Execute[] = [];
  for (let i = 0; i < ctx.options.samples; i++) {
    seqOurs.push(await oursExecute(ctx, { i }));
    seqBare.push(await bareExecute(ctx, { i }));
    if (iso) seqIsolated.push(await bareExecute(ctx, { i }, 'isolated'));
  }
  const n = Math.max(1, Math.floor(ctx.options.sustained / 2));
  const loadOurs = await loaded(n, () => oursExecute(ctx, { x: 1 }));
  const loadBare = await loaded(n, () => bareExecute(ctx, { x: 1 }));
  const loadIsolated = iso ? await loaded(n, () => bareExecute(ctx, { x: 1 }, 'isolated')) : undefined;
  const seq = (list: Execute[]) => ({ ...summarize(list.filter((e) => e.ok).map((e) => e.ms)), other: outcomes(list) });
  return {
    seqOurs: seq(seqOurs),
    seqBare: seq(seqBare),
    seqIsolated: iso ? seq(seqIsolated) : undefined,
    loadOurs,
    loadBare,
    loadIsolated,
    n,
  };
}

export async function runLatency(ctx: BenchContext): Promise<BenchReport> {
  const seq = await sequential(ctx);
  // Latencies are of the runs that succeeded; the others are counted in the table.
  const okOurs = seq.ours.filter((t) => t.ok);
  const okBare = seq.bare.filter((t) => t.ok);
  const o = {
    running: summarize(okOurs.map((t) => t.running)),
    succeeded: summarize(okOurs.map((t) => t.succeeded)),
    created: summarize(okOurs.map((t) => t.created)),
  };
  const timesOf = (list: RunTiming[]) => ({
    running: summarize(list.map((t) => t.running)),
    succeeded: summarize(list.map((t) => t.succeeded)),
    created: summarize(list.map((t) => t.created)),
  });
  const b = timesOf(okBare);
  const i = seq.isolated ? timesOf(seq.isolated.filter((t) => t.ok)) : undefined;
  const steps = await stepsOf(ctx, okOurs);
  const sus = await sustainedRuns(ctx);
  const fn = await functions(ctx);

  const n = ctx.options.samples;
  const ratios: Ratio[] = [
    ...ratiosOf('runs', 'create→RUNNING p50', 'ms', o.running.p50, { bare: b.running.p50, isolated: i?.running.p50 }),
    ...ratiosOf('runs', 'create→RUNNING p99', 'ms', o.running.p99, { bare: b.running.p99, isolated: i?.running.p99 }),
    ...ratiosOf('runs', 'create→SUCCEEDED p50', 'ms', o.succeeded.p50, {
      bare: b.succeeded.p50,
      isolated: i?.succeeded.p50,
    }),
    ...ratiosOf('runs', 'create→SUCCEEDED p99', 'ms', o.succeeded.p99, {
      bare: b.succeeded.p99,
      isolated: i?.succeeded.p99,
    }),
    ...ratiosOf('runs', 'runs created/s', '/s', sus.ours.createdPerS, {
      bare: sus.bare.createdPerS,
      isolated: sus.isolated?.createdPerS,
    }),
    ...ratiosOf('runs', 'runs completed/s', '/s', sus.ours.completedPerS, {
      bare: sus.bare.completedPerS,
      isolated: sus.isolated?.completedPerS,
    }),
    ...ratiosOf('runs', 'function execute p50', 'ms', fn.seqOurs.p50, {
      bare: fn.seqBare.p50,
      isolated: fn.seqIsolated?.p50,
    }),
    ...ratiosOf('runs', 'function execute p99', 'ms', fn.seqOurs.p99, {
      bare: fn.seqBare.p99,
      isolated: fn.seqIsolated?.p99,
    }),
    ...ratiosOf('runs', 'function executes/s', '/s', fn.loadOurs.perS, {
      bare: fn.loadBare.perS,
      isolated: fn.loadIsolated?.perS,
    }),
  ];
  const figures: Figure[] = [
    ...(sus.createdPerSWorkerPaused !== undefined
      ? [figure('runs', 'runs created/s with our worker stopped (creation alone)', sus.createdPerSWorkerPaused, '/s')]
      : []),
    ...(seq.workerQueries !== undefined
      ? [figure('runs', 'worker SQL statements per run, one at a time', seq.workerQueries, '')]
      : []),
  ];
  return {
    name: 'runs',
    figures,
    tables: [
      table(
        `runs: one at a time, ${n} each, interleaved (ms from the create call)`,
        [
          'path',
          'create p50',
          'RUNNING p50',
          'RUNNING p99',
          'SUCCEEDED p50',
          'SUCCEEDED p99',
          'SUCCEEDED max',
          'not succeeded',
        ],
        [
          [
            'ours: POST /api/structures/{id}/runs',
            o.created.p50,
            o.running.p50,
            o.running.p99,
            o.succeeded.p50,
            o.succeeded.p99,
            o.succeeded.max,
            outcomesOtherThanSuccess(seq.ours),
          ],
          ...(
            [
              ['bare: workflow + spawn activity', b, seq.bare],
              ...(i ? [['isolated bare: workflow + sandboxed spawn activity', i, seq.isolated!] as const] : []),
            ] as const
          ).map(([name, t, list]) => [
            name,
            t.created.p50,
            t.running.p50,
            t.running.p99,
            t.succeeded.p50,
            t.succeeded.p99,
            t.succeeded.max,
            outcomesOtherThanSuccess(list),
          ]),
        ],
      ),
      table(
        'runs: where the time of ours goes (per run, ms)',
        ['step', 'p50', 'p99'],
        steps.map(([name, v]) => {
          const s = summarize(v);
          return [name, s.p50, s.p99];
        }),
      ),
      table(
        `runs: ${ctx.options.sustained} created back to back, ${CONCURRENCY} create calls in flight`,
        ['path', 'created/s', 'completed/s', 'succeeded', 'create failed'],
        [
          [
            'ours (POST /api/structures/{id}/runs)',
            sus.ours.createdPerS,
            sus.ours.completedPerS,
            `${sus.ours.ok}/${sus.ours.created}`,
            String(sus.ours.failed),
          ],
          ...[sus.bare, ...(sus.isolated ? [sus.isolated] : [])].map((x, k) => [
            `${k ? 'isolated bare' : 'bare'} (client.workflow.start)`,
            x.createdPerS,
            x.completedPerS,
            `${x.ok}/${x.created}`,
            String(x.failed),
          ]),
          ...(sus.createdPerSWorkerPaused !== undefined
            ? [['ours, our worker stopped meanwhile (the control)', sus.createdPerSWorkerPaused, NaN, '', '']]
            : []),
        ],
      ),
      table(
        `function execute: ${n} one at a time, then ${fn.n} at ${CONCURRENCY} in flight (ms)`,
        ['path', 'seq p50', 'seq p99', 'loaded p50', 'loaded p99', 'executes/s', 'not ok (seq; loaded)'],
        [
          [
            'ours: POST /api/functions/{id}/execute',
            fn.seqOurs.p50,
            fn.seqOurs.p99,
            fn.loadOurs.p50,
            fn.loadOurs.p99,
            fn.loadOurs.perS,
            `${fn.seqOurs.other}; ${fn.loadOurs.other}`,
          ],
          ...[
            ['bare: workflow + shim activity', fn.seqBare, fn.loadBare] as const,
            ...(fn.seqIsolated && fn.loadIsolated
              ? [['isolated bare: workflow + sandboxed shim activity', fn.seqIsolated, fn.loadIsolated] as const]
              : []),
          ].map(([name, sq, ld]) => [name, sq.p50, sq.p99, ld.p50, ld.p99, ld.perS, `${sq.other}; ${ld.other}`]),
        ],
      ),
    ],
    ratios,
    notes: [
      'executes/s: successful answers per second until the last one; a 202 means not ended within FUNCTION_EXECUTE_TIMEOUT_SECONDS (then followed up to a minute)',
      ...(sus.ours.stuck.length || sus.bare.stuck.length || sus.isolated?.stuck.length
        ? [
            `sustained runs not ended in time: ours ${sus.ours.stuck.join(', ') || 'none'}; bare ${sus.bare.stuck.join(', ') || 'none'}; isolated bare ${sus.isolated?.stuck.join(', ') || 'none'}`,
          ]
        : []),
      'a "lost" run is QUEUED while its workflow has ended: the workflow found no row (see RESULTS.md: the start races the insert\'s commit)',
      `with ${n} samples p99 is the ${n >= 100 ? '99th percentile' : 'largest value'}; the program itself (bare: spawn → exit, output read) p50 ${fmt(summarize(seq.bare.map((t) => t.programMs ?? NaN)).p50)} ms${seq.isolated ? `, through the sandbox chain (isolated bare) ${fmt(summarize(seq.isolated.map((t) => t.programMs ?? NaN)).p50)} ms` : ''}`,
    ],
    data: {
      sequential: { ours: o, bare: b, isolated: i },
      steps: steps.map(([name, v]) => ({ name, ...summarize(v) })),
      sustained: sus,
      functions: fn,
    },
  };
}

// 12. The api's create path alone (production shape): runs created while our worker process is stopped
// (SIGSTOP), so that nothing but creating competes for the machine, one at a time and then in a burst
// (CREATE_CONCURRENCY in flight, as the scaling bench's burst), against bare workflow starts made the same way.
// What a loaded machine does not distort is printed per create: the api process's CPU time, and the SQL
// statements and Temporal (gRPC) calls it made, counted by the probe (support/probe.ts). The runs go on
// once the worker continues, and are waited for (bounded), so that the next benchmark finds a quiet worker.
import type { BenchContext } from './support/context';
import { cpuNow, cpuSeconds } from './support/processes';
import { type Started, startBare, startOurs } from './support/runs';
import { BenchReport, Figure, figure, pool, Ratio, sleep, summarize, table } from './support/stats';
// Create calls in flight in the burst: the scaling bench's.
import { CREATE_CONCURRENCY } from './scaling';

/** How long the api's CPU is measured with nothing to do. */
const IDLE_MS = 3_000;
/** A created run that has not ended this long after the worker continued is not waited for. */
const DRAIN_MS = 120_000;

interface Phase {
  which: 'ours' | 'bare';
  inFlight: number;
  latency: ReturnType<typeof summarize>;
  perSecond: number;
  failed: number;
  /** Per create call: CPU (µs) of PostgreSQL and of the Temporal server. */
  postgresUs: number;
  temporalUs: number;
  /** Per create call, ours only: api CPU (µs), SQL statements, Temporal calls. */
  cpuUs?: number;
  queries?: number;
  grpcCalls?: number;
}

async function phase(ctx: BenchContext, which: 'ours' | 'bare', n: number, inFlight: number, started: Started[]) {
  const production = ctx.production!;
  const api = production.probes.find((p) => p.name === 'api')!;
  await production.reset();
  const cpu0 = cpuSeconds(api.pid);
  const stack0 = cpuNow();
  const times: number[] = [];
  let failed = 0;
  const t0 = Date.now();
  await pool(Array.from({ length: n }), inFlight, async () => {
    const c0 = Date.now();
    try {
      started.push(await (which === 'ours' ? startOurs : startBare)(ctx, DRAIN_MS));
      times.push(Date.now() - c0);
    } catch {
      failed++;
    }
  });
  const ms = Date.now() - t0;
  const stack1 = cpuNow();
  const result: Phase = {
    which,
    inFlight,
    latency: summarize(times),
    perSecond: (times.length / ms) * 1000,
    failed,
    postgresUs: ((stack1.postgres - stack0.postgres) * 1e6) / n,
    temporalUs: ((stack1.temporal - stack0.temporal) * 1e6) / n,
  };
  if (which === 'ours') {
    result.cpuUs = ((cpuSeconds(api.pid) - cpu0) * 1e6) / n;
    await sleep(600); // the probe writes its counts every 500 ms
    const sample = api.read();
    if (sample) {
      result.queries = sample.queries / n;
      result.grpcCalls = sample.grpcCalls / n;
    }
  }
  return result;
}

export async function creates(ctx: BenchContext): Promise<BenchReport> {
  const worker = ctx.production?.probes.find((p) => p.name === 'worker');
  if (!worker) throw new Error('creates: needs the production shape (--shape=production)');
  const sequential = ctx.options.samples;
  const burst = ctx.options.burst;
  const started: Started[] = [];
  const phases: Phase[] = [];
  // Warm-up: first-use costs (connections, prepared statements) are not what is measured.
  await startOurs(ctx, DRAIN_MS).then((s) => started.push(s));
  await startBare(ctx, DRAIN_MS).then((s) => started.push(s));
  process.kill(worker.pid, 'SIGSTOP');
  let idleCpuPerS = NaN;
  try {
    // What the api spends doing nothing (its timers, the probe), which the phases' CPU includes.
    const api = ctx.production!.probes.find((p) => p.name === 'api')!;
    const idle0 = cpuSeconds(api.pid);
    await sleep(IDLE_MS);
    idleCpuPerS = ((cpuSeconds(api.pid) - idle0) * 1e6) / (IDLE_MS / 1000);
    for (const which of ['ours', 'bare', 'ours', 'bare'] as const)
      phases.push(await phase(ctx, which, sequential, 1, started));
    for (const which of ['ours', 'bare'] as const)
      phases.push(await phase(ctx, which, burst, CREATE_CONCURRENCY, started));
  } finally {
    process.kill(worker.pid, 'SIGCONT');
  }
  await Promise.all(started.map((s) => s.done));

  const rows = phases.map((p) => [
    p.which,
    String(p.inFlight),
    String(p.latency.n),
    p.latency.p50,
    p.latency.p99,
    p.perSecond,
    String(p.failed),
    p.cpuUs ?? NaN,
    p.postgresUs,
    p.temporalUs,
    p.queries ?? NaN,
    p.grpcCalls ?? NaN,
  ]);
  const of = (which: 'ours' | 'bare', inFlight: number) =>
    phases.filter((p) => p.which === which && p.inFlight === inFlight);
  const mean = (ps: Phase[], f: (p: Phase) => number) => ps.reduce((s, p) => s + f(p), 0) / ps.length;
  const ratios: Ratio[] = [
    {
      bench: 'creates',
      metric: 'create p50, one at a time, worker stopped',
      ours: mean(of('ours', 1), (p) => p.latency.p50),
      bare: mean(of('bare', 1), (p) => p.latency.p50),
      unit: 'ms',
    },
    {
      bench: 'creates',
      metric: `create p99, burst of ${burst}, worker stopped`,
      ours: of('ours', CREATE_CONCURRENCY)[0].latency.p99,
      bare: of('bare', CREATE_CONCURRENCY)[0].latency.p99,
      unit: 'ms',
    },
    {
      bench: 'creates',
      metric: `creates/s, burst of ${burst}, worker stopped (bare/ours: above 1 is slower)`,
      ours: 1 / of('ours', CREATE_CONCURRENCY)[0].perSecond,
      bare: 1 / of('bare', CREATE_CONCURRENCY)[0].perSecond,
      unit: 's per create',
    },
  ];
  const burstOurs = of('ours', CREATE_CONCURRENCY)[0];
  const figures: Figure[] = [
    figure('creates', 'api CPU per second, idle', idleCpuPerS, 'µs'),
    figure(
      'creates',
      'api CPU per create, one at a time',
      mean(of('ours', 1), (p) => p.cpuUs!),
      'µs',
    ),
    figure('creates', `api CPU per create, burst of ${burst}`, burstOurs.cpuUs!, 'µs'),
    figure('creates', `PostgreSQL CPU per create, burst of ${burst}`, burstOurs.postgresUs, 'µs'),
    figure('creates', `Temporal server CPU per create, burst of ${burst}`, burstOurs.temporalUs, 'µs'),
    figure(
      'creates',
      `Temporal server CPU per bare start, burst of ${burst}`,
      of('bare', CREATE_CONCURRENCY)[0].temporalUs,
      'µs',
    ),
    figure('creates', 'SQL statements per create', burstOurs.queries ?? NaN, ''),
    figure('creates', 'Temporal calls per create', burstOurs.grpcCalls ?? NaN, ''),
  ];
  return {
    name: 'creates',
    tables: [
      table(
        `creates: our worker stopped; ${sequential} one at a time (twice, interleaved), then a burst of ${burst}`,
        [
          'path',
          'in flight',
          'n',
          'p50 ms',
          'p99 ms',
          'per s',
          'failed',
          'api CPU µs/create',
          'PostgreSQL µs',
          'Temporal µs',
          'SQL/create',
          'gRPC/create',
        ],
        rows,
      ),
    ],
    ratios,
    figures,
    notes: [
      'ours: POST /api/structures/{id}/runs from this process; bare: client.workflow.start from this process',
      'SQL/create and gRPC/create: every statement and unary call of the api process over the phase, divided by its creates',
    ],
    data: { phases },
  };
}

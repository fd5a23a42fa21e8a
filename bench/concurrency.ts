// Admission through a concurrency key (docs/run-control.md#concurrency-keys-and-limits): create → RUNNING of a
// structure run with a `concurrency_key` under `concurrency: {limit: 3}`, against the same structure without a
// concurrency declaration, interleaved in one run (the baseline is the plain run, measured alongside). Nothing
// else runs, so no key is at its limit: what is measured is the cost of admission itself (the resource and
// key read, the queue's counts under the organization's lock). Goal: at most 10 ms more at p50.
import { BenchContext } from './support/context';
import { oneRun, outcomesOtherThanSuccess, type RunTiming } from './support/runs';
import { BenchReport, figure, fmt, summarize, table } from './support/stats';

const RUN_TIMEOUT_MS = 60_000;
const KEYS = 5;

async function declare(ctx: BenchContext, concurrency: Record<string, unknown> | null) {
  const res = await ctx.http('PATCH', `/api/structures/${ctx.structureId}`, { concurrency });
  if (res.status !== 200) throw new Error(`PATCH concurrency: ${res.status} ${JSON.stringify(res.body)}`);
}

/** One run of the trivial structure with a concurrency key (oneRun's timing, with the key in the create body). */
async function keyedRun(ctx: BenchContext, key: string): Promise<RunTiming> {
  const http = ctx.http.bind(ctx);
  const keyed: BenchContext = {
    ...ctx,
    http: (method, urlPath, body) =>
      http(method, urlPath, method === 'POST' ? { ...(body as object), concurrency_key: key } : body),
  };
  return oneRun(keyed, 'ours', RUN_TIMEOUT_MS);
}

export async function concurrency(ctx: BenchContext): Promise<BenchReport> {
  const plain: RunTiming[] = [];
  const keyed: RunTiming[] = [];
  try {
    await oneRun(ctx, 'ours', RUN_TIMEOUT_MS); // warm-up
    for (let i = 0; i < ctx.options.samples; i++) {
      await declare(ctx, null);
      plain.push(await oneRun(ctx, 'ours', RUN_TIMEOUT_MS));
      await declare(ctx, { limit: 3 });
      keyed.push(await keyedRun(ctx, `customer-${i % KEYS}`));
    }
  } finally {
    await declare(ctx, null);
  }
  const running = (runs: RunTiming[]) => summarize(runs.filter((r) => r.ok).map((r) => r.running));
  const p = running(plain);
  const k = running(keyed);
  return {
    name: 'concurrency',
    tables: [
      table(
        `create → RUNNING, ${ctx.options.samples} runs each, interleaved (ms)`,
        ['', 'p50', 'mean', 'p99', 'max'],
        [
          ['no concurrency declared', fmt(p.p50), fmt(p.mean), fmt(p.p99), fmt(p.max)],
          [`concurrency {limit: 3}, ${KEYS} keys`, fmt(k.p50), fmt(k.mean), fmt(k.p99), fmt(k.max)],
        ],
      ),
    ],
    notes: [`not SUCCEEDED: plain ${outcomesOtherThanSuccess(plain)}, keyed ${outcomesOtherThanSuccess(keyed)}`],
    ratios: [
      { bench: 'concurrency', metric: 'create → RUNNING p50, keyed/plain', ours: k.p50, bare: p.p50, unit: 'ms' },
    ],
    figures: [
      figure('concurrency', 'create → RUNNING p50 added by a concurrency key', k.p50 - p.p50, 'ms', { max: 10 }),
    ],
    data: { plain, keyed },
  };
}

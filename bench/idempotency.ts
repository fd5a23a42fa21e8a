// Idempotency keys (docs/run-control.md#idempotency-keys): what an Idempotency-Key costs a create. Creates of a
// structure run, sequential and interleaved (one with a new key, one without, in turn, so both see the same
// load), timed from the request to the 201; the baseline is the create without a key, measured in the same
// run. Goal: with a key at most 1.1× without (issue 25). A repeat of a key (answered from the stored record,
// 200) is timed too.
import type { BenchContext } from './support/context';
import { BenchReport, fmt, Ratio, summarize, table } from './support/stats';

const WARMUP = 5;

async function timedCreate(ctx: BenchContext, key?: string): Promise<{ ms: number; status: number; id: string }> {
  const started = performance.now();
  const res = await fetch(`${ctx.baseUrl}/api/structures/${ctx.structureId}/runs`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ctx.key}`,
      'content-type': 'application/json',
      ...(key ? { 'Idempotency-Key': key } : {}),
    },
    body: JSON.stringify({ args: ['bench'] }),
  });
  const body = (await res.json()) as { structure_run_id: string };
  const ms = performance.now() - started;
  if (res.status !== 201 && res.status !== 200) throw new Error(`create answered ${res.status}`);
  return { ms, status: res.status, id: body.structure_run_id };
}

export async function idempotency(ctx: BenchContext): Promise<BenchReport> {
  const samples = ctx.options.samples;
  const run = `${Date.now()}`;
  for (let i = 0; i < WARMUP; i++) {
    await timedCreate(ctx);
    await timedCreate(ctx, `warm-${run}-${i}`);
  }
  const plain: number[] = [];
  const keyed: number[] = [];
  const repeats: number[] = [];
  for (let i = 0; i < samples; i++) {
    plain.push((await timedCreate(ctx)).ms);
    const key = `bench-${run}-${i}`;
    const first = await timedCreate(ctx, key);
    keyed.push(first.ms);
    const again = await timedCreate(ctx, key);
    if (again.status !== 200 || again.id !== first.id) throw new Error(`repeat of ${key} made another run`);
    repeats.push(again.ms);
  }
  const [p, k, r] = [summarize(plain), summarize(keyed), summarize(repeats)];
  const row = (name: string, s: typeof p) => [name, fmt(s.p50), fmt(s.mean), fmt(s.p99), fmt(s.max)];
  const ratios: Ratio[] = [
    { bench: 'idempotency', metric: 'create p50 with key', ours: k.p50, bare: p.p50, unit: 'ms' },
    { bench: 'idempotency', metric: 'create mean with key', ours: k.mean, bare: p.mean, unit: 'ms' },
  ];
  return {
    name: 'idempotency',
    tables: [
      table(
        `idempotency: POST /api/structures/{id}/runs, ${samples} of each, sequential and interleaved`,
        ['create', 'p50 ms', 'mean ms', 'p99 ms', 'max ms'],
        [
          row('with a new Idempotency-Key (201)', k),
          row('without a key: the baseline (201)', p),
          row('repeat of a key (200, replayed)', r),
        ],
      ),
    ],
    ratios,
    notes: ['goal (issue 25): create with a key at most 1.1× the create without, p50'],
    data: { plain, keyed, repeats, samples },
  };
}

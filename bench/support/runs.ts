// One run of the trivial program, ours and a baseline's (bare, or isolated bare: the same program through our
// sandbox chain), timed the same way from the caller's side:
//   t0        just before the create call (POST /api/structures/{id}/runs, or the Temporal client's start),
//   created   the create call answered,
//   running   the program's process was spawned (ours: the run's started_at; bare: the activity's spawn),
//   succeeded a client learns it ended (ours: the run_updates notification and a read of the row; bare:
//             the workflow result arrives at the client).
// Every wait is bounded: a run not ended within `timeoutMs` is reported with the status it had then.
import { randomUUID } from 'node:crypto';
import type { BareRunResult } from '../baseline/activities';
import { BARE_TASK_QUEUE, BenchContext } from './context';
import { sleep } from './stats';

export interface RunTiming {
  /** ms from t0 (see above). */
  created: number;
  running: number;
  succeeded: number;
  /** How it ended: a terminal status, `lost (...)` (see RunWatcher), or `stuck <status>` (the timeout passed). */
  outcome: string;
  ok: boolean;
  /** Baselines only: spawn → exit of the program (ms). */
  programMs?: number;
  /** Ours only: the run, for step breakdowns. */
  runId?: string;
  t0: number;
}

export interface Started {
  /** Resolves once the run ended (or the timeout passed). */
  done: Promise<RunTiming>;
}

/** Creates a run through the api; resolves once the api answered. */
export async function startOurs(ctx: BenchContext, timeoutMs: number): Promise<Started> {
  const t0 = Date.now();
  const res = await ctx.http('POST', `/api/structures/${ctx.structureId}/runs`, { args: [] });
  const created = Date.now() - t0;
  if (res.status !== 201) throw new Error(`create run: ${res.status} ${JSON.stringify(res.body)}`);
  const runId: string = res.body.structure_run_id;
  return {
    done: ctx.watcher.ended(runId, timeoutMs).then((end) => ({
      t0,
      created,
      runId,
      running: end.startedAt !== null ? end.startedAt - t0 : NaN,
      succeeded: end.seenAt - t0,
      outcome: end.lost
        ? `lost (${end.status}, workflow ended)`
        : end.timedOut
          ? `stuck ${end.status}`
          : end.status === 'SUCCEEDED' || !end.reason
            ? end.status
            : `${end.status} (${end.reason})`,
      ok: end.status === 'SUCCEEDED',
    })),
  };
}

/** What a measurement runs: ours, or one of the two baselines (bench/baseline). */
export type Which = 'ours' | Baseline;
export type Baseline = 'bare' | 'isolated';

/** How a baseline is named in tables and ratio lines. */
export const BASELINE_NAME: Record<Baseline, string> = { bare: 'bare', isolated: 'isolated bare' };

/** Starts a baseline's workflow running the same program; resolves once Temporal accepted the start. */
export async function startBare(ctx: BenchContext, timeoutMs: number, baseline: Baseline = 'bare'): Promise<Started> {
  const t0 = Date.now();
  const handle = await ctx.stack.env.client.workflow.start(
    baseline === 'bare' ? 'bareRunWorkflow' : 'isolatedRunWorkflow',
    {
      taskQueue: BARE_TASK_QUEUE,
      workflowId: `bench-${baseline}-${randomUUID()}`,
      args: [ctx.program],
    },
  );
  const created = Date.now() - t0;
  const result = (handle.result() as Promise<BareRunResult>).then((r): RunTiming => ({
    t0,
    created,
    running: r.spawnedAt - t0,
    succeeded: Date.now() - t0,
    ok: r.exitCode === 0,
    outcome: r.exitCode === 0 ? 'SUCCEEDED' : 'FAILED',
    programMs: r.exitedAt - r.spawnedAt,
  }));
  const timeout = sleep(timeoutMs).then((): RunTiming => ({
    t0,
    created,
    running: NaN,
    succeeded: Date.now() - t0,
    ok: false,
    outcome: 'stuck',
  }));
  return { done: Promise.race([result, timeout]) };
}

export async function oneRun(ctx: BenchContext, which: Which, timeoutMs: number): Promise<RunTiming> {
  return (await startOne(ctx, which, timeoutMs)).done;
}

export function startOne(ctx: BenchContext, which: Which, timeoutMs: number): Promise<Started> {
  return which === 'ours' ? startOurs(ctx, timeoutMs) : startBare(ctx, timeoutMs, which);
}

/** The baselines this context measures: bare, and isolated bare where runs are sandboxed. */
export const baselinesOf = (ctx: BenchContext): Baseline[] => (ctx.isolated ? ['bare', 'isolated'] : ['bare']);

/** "3 stuck QUEUED, 1 FAILED": the outcomes other than SUCCEEDED, counted. */
export function outcomesOtherThanSuccess(runs: RunTiming[]): string {
  const counts = new Map<string, number>();
  for (const r of runs) if (!r.ok) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  return [...counts.entries()].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
}

/** Ours that ended otherwise than SUCCEEDED, one of each outcome, as a user sees them: the record's detail, the logs. */
export async function showFailedRuns(ctx: BenchContext, all: RunTiming[]): Promise<void> {
  const seen = new Set<string>();
  for (const t of all) {
    if (t.ok || !t.runId || !/FAILED|ERROR/.test(t.outcome) || seen.has(t.outcome)) continue;
    seen.add(t.outcome);
    const run = await ctx.http('GET', `/api/structure-runs/${t.runId}`);
    const logs = await ctx.http('GET', `/api/structure-runs/${t.runId}/logs`);
    console.error(
      `scaling: ${t.outcome} (${t.runId}): ${JSON.stringify(run.body?.status_detail)}; ` +
        `logs ${JSON.stringify(logs.body).slice(0, 1500)}`,
    );
  }
}

// One run of the trivial program, ours and bare, timed the same way from the caller's side:
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
  /** Bare only: spawn → exit of the program (ms). */
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

/** Starts the bare workflow running the same program; resolves once Temporal accepted the start. */
export async function startBare(ctx: BenchContext, timeoutMs: number): Promise<Started> {
  const t0 = Date.now();
  const handle = await ctx.stack.env.client.workflow.start('bareRunWorkflow', {
    taskQueue: BARE_TASK_QUEUE,
    workflowId: `bench-bare-${randomUUID()}`,
    args: [ctx.program],
  });
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

export async function oneRun(ctx: BenchContext, which: 'ours' | 'bare', timeoutMs: number): Promise<RunTiming> {
  return (await (which === 'ours' ? startOurs(ctx, timeoutMs) : startBare(ctx, timeoutMs))).done;
}

/** "3 stuck QUEUED, 1 FAILED": the outcomes other than SUCCEEDED, counted. */
export function outcomesOtherThanSuccess(runs: RunTiming[]): string {
  const counts = new Map<string, number>();
  for (const r of runs) if (!r.ok) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  return [...counts.entries()].map(([k, n]) => `${n} ${k}`).join(', ') || 'none';
}

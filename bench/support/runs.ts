// One run of the trivial program, ours and bare, timed the same way from the caller's side:
//   t0        just before the create call (POST /api/structures/{id}/runs, or the Temporal client's start),
//   created   the create call answered,
//   running   the program's process was spawned (ours: the run's started_at; bare: the activity's spawn),
//   succeeded a client learns it ended (ours: the run_updates notification and a read of the row; bare:
//             the workflow result arrives at the client).
import { randomUUID } from 'node:crypto';
import type { BareRunResult } from '../baseline/activities';
import { BARE_TASK_QUEUE, BenchContext } from './context';

export interface RunTiming {
  /** ms from t0 (see above). */
  created: number;
  running: number;
  succeeded: number;
  ok: boolean;
  /** Bare only: spawn → exit of the program (ms). */
  programMs?: number;
  /** Ours only: the run, for step breakdowns. */
  runId?: string;
  t0: number;
}

export interface Started {
  /** Resolves once the run ended. */
  done: Promise<RunTiming>;
}

/** Creates a run of the trivial structure through the api; resolves once the api answered. */
export async function startOurs(ctx: BenchContext, resourcePath = `/api/structures/${ctx.structureId}/runs`): Promise<Started> {
  const t0 = Date.now();
  const res = await ctx.http('POST', resourcePath, { args: [] });
  const created = Date.now() - t0;
  if (res.status !== 201) throw new Error(`create run: ${res.status} ${JSON.stringify(res.body)}`);
  const runId: string = res.body.structure_run_id ?? res.body.run_id;
  return {
    done: ctx.watcher.ended(runId).then((end) => ({
      t0, created, runId,
      running: end.startedAt !== null ? end.startedAt - t0 : NaN,
      succeeded: end.seenAt - t0,
      ok: end.status === 'SUCCEEDED',
    })),
  };
}

/** Starts the bare workflow running the same program; resolves once Temporal accepted the start. */
export async function startBare(ctx: BenchContext): Promise<Started> {
  const t0 = Date.now();
  const handle = await ctx.stack.env.client.workflow.start('bareRunWorkflow', {
    taskQueue: BARE_TASK_QUEUE, workflowId: `bench-bare-${randomUUID()}`, args: [ctx.program],
  });
  const created = Date.now() - t0;
  return {
    done: (handle.result() as Promise<BareRunResult>).then((r) => ({
      t0, created, running: r.spawnedAt - t0, succeeded: Date.now() - t0, ok: r.exitCode === 0, programMs: r.exitedAt - r.spawnedAt,
    })),
  };
}

export async function oneRun(ctx: BenchContext, which: 'ours' | 'bare'): Promise<RunTiming> {
  return (await (which === 'ours' ? startOurs(ctx) : startBare(ctx))).done;
}

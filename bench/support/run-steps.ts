// Where the time of one of our runs goes, step by step: from its row, its SYSTEM events and its workflow's
// history (the `runs` bench's breakdown, and the scaling bench's at 1 in flight).
import { workflowIdOf } from '../../src/temporal/workflow-start';
import type { BenchContext } from './context';
import type { RunTiming } from './runs';

/** ms since the epoch of a history event's time. */
const msOf = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;

/**
 * The moments of one run's workflow, from its Temporal history (the server's clock = ours: one machine):
 * the start, its first workflow task (the slot and STARTING local activities, the execute activity scheduled),
 * the execute activity's start and end, and the next workflow task (the terminal write).
 */
async function historyMoments(ctx: BenchContext, runId: string) {
  const history = await ctx.stack.env.client.workflow.getHandle(workflowIdOf('structure-run', runId)).fetchHistory();
  const at = (pick: (e: NonNullable<typeof history.events>[number]) => unknown, nth = 0) =>
    msOf((history.events ?? []).filter((e) => pick(e))[nth]?.eventTime);
  return {
    workflowStarted: at((e) => e.workflowExecutionStartedEventAttributes),
    firstTaskStarted: at((e) => e.workflowTaskStartedEventAttributes),
    firstTaskCompleted: at((e) => e.workflowTaskCompletedEventAttributes),
    activityStarted: at((e) => e.activityTaskStartedEventAttributes),
    activityCompleted: at((e) => e.activityTaskCompletedEventAttributes),
    secondTaskStarted: at((e) => e.workflowTaskStartedEventAttributes, 1),
  };
}

/** Where the time of our runs goes, from the run row, its SYSTEM events and its workflow's history. */
export async function stepsOf(ctx: BenchContext, runs: RunTiming[]): Promise<Array<[string, number[]]>> {
  const rows: Array<{ run_id: string; created_at: Date; starting_at: Date; started_at: Date; completed_at: Date }> =
    await ctx.stack.ds.query(
      `SELECT r.run_id, r.created_at, r.started_at, r.completed_at,
            (SELECT e.created_at FROM run_events e WHERE e.run_id = r.run_id AND e.type = 'StructureRunStarting') AS starting_at
       FROM runs r WHERE r.run_id = ANY($1::uuid[])`,
      [runs.map((r) => r.runId)],
    );
  const byId = new Map(rows.map((r) => [r.run_id, r]));
  const timed = runs.filter((t) => byId.has(t.runId!));
  const moments = new Map(
    await Promise.all(timed.map(async (t) => [t.runId!, await historyMoments(ctx, t.runId!)] as const)),
  );
  type Row = (typeof rows)[0];
  type Moments = Awaited<ReturnType<typeof historyMoments>>;
  const steps: Array<[string, (t: RunTiming, r: Row, h: Moments) => number]> = [
    ['create call → workflow started (server)', (t, _, h) => h.workflowStarted - t.t0],
    ['workflow started → POST answered 201', (t, _, h) => t.t0 + t.created - h.workflowStarted],
    ['201 → first workflow task started (worker polled it)', (t, _, h) => h.firstTaskStarted - t.t0 - t.created],
    [
      'workflow task started → STARTING written (slot, STARTING: local activities)',
      (_, r, h) => r.starting_at.getTime() - h.firstTaskStarted,
    ],
    [
      'STARTING → workflow task completed (execute scheduled)',
      (_, r, h) => h.firstTaskCompleted - r.starting_at.getTime(),
    ],
    ['task completed → execute activity started', (_, __, h) => h.activityStarted - h.firstTaskCompleted],
    [
      'activity started → process spawned (reads, uid lease, cgroup, claim)',
      (_, r, h) => r.started_at.getTime() - h.activityStarted,
    ],
    [
      'spawned → activity completed (sandbox chain, program, output flushed)',
      (_, r, h) => h.activityCompleted - r.started_at.getTime(),
    ],
    ['activity completed → next workflow task started', (_, __, h) => h.secondTaskStarted - h.activityCompleted],
    [
      'workflow task started → SUCCEEDED written (terminal write)',
      (_, r, h) => r.completed_at.getTime() - h.secondTaskStarted,
    ],
    ['SUCCEEDED written → seen by a client (NOTIFY, read)', (t, r) => t.succeeded - (r.completed_at.getTime() - t.t0)],
    ['total: create call → seen by a client', (t) => t.succeeded],
  ];
  return steps.map(([name, f]) => [name, timed.map((t) => f(t, byId.get(t.runId!)!, moments.get(t.runId!)!))]);
}

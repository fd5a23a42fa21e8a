// Started by the Temporal Schedule of a structure, function or assistant (src/temporal/run-schedules.ts): makes
// the fire's run (idempotent: keyed by the schedule and the nominal time) and lives as long as the run, so the
// schedule's overlap policy decides about runs: `skip` skips a fire while the last run is open, `cancel_other`
// cancels this workflow, which asks its run to stop and waits until it has.
import { CancellationScope, isCancellation, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ScheduledRunInput, ScheduledRunOutcome } from '../src/temporal/contracts';
import { STATUS_WRITES } from './run-scope';

const { fireSchedule, cancelFiredRun } = proxyActivities<Activities>(STATUS_WRITES);
/** The wait for the run: a killed worker's wait is taken up by another within the heartbeat timeout. */
const { awaitScheduledRun } = proxyActivities<Activities>({
  startToCloseTimeout: '7 days',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/**
 * The time this fire was scheduled for: Temporal's `TemporalScheduledStartTime` search attribute, else the
 * `-<RFC 3339 time>` Temporal appends to the action's workflow id, else the start time (never reached in practice).
 */
export function nominalTimeOf(info: ReturnType<typeof workflowInfo>): Date {
  const attribute = info.typedSearchAttributes.getAll().find((p) => p.key.name === 'TemporalScheduledStartTime');
  if (attribute?.value instanceof Date) return attribute.value;
  const suffix = /-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)$/.exec(info.workflowId);
  return suffix ? new Date(suffix[1]) : info.startTime;
}

export async function scheduledRunWorkflow(input: ScheduledRunInput): Promise<ScheduledRunOutcome> {
  const nominalTime = nominalTimeOf(workflowInfo()).toISOString();
  const fired = await fireSchedule({ scheduleId: input.scheduleId, nominalTime });
  if ('skipped' in fired) return fired;
  try {
    return { runId: fired.runId, status: await awaitScheduledRun({ runId: fired.runId }) };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(async () => {
      await cancelFiredRun({ runId: fired.runId, requestedBy: `schedule:${input.scheduleId}` });
      await awaitScheduledRun({ runId: fired.runId });
    });
    throw err;
  }
}

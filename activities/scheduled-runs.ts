// Activities of a schedule's fire (workflows/scheduled-run.ts): thin adapters over src/services/schedules/fire.ts.
import { CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import type { RunStatus } from '../src/persistence/entities/run';
import { cancelFiredRun, createScheduledRun, endedStatus, type FireOutcome } from '../src/services/schedules/fire';

export function createScheduledRunActivities(deps: ActivityDeps) {
  return {
    /** Makes the fire's run (idempotent: its id derives from the schedule and the nominal time). */
    async fireSchedule(input: { scheduleId: string; nominalTime: string }): Promise<FireOutcome> {
      return createScheduledRun(deps, input.scheduleId, new Date(input.nominalTime));
    },

    /** Waits (heartbeating) until the run has ended; a cancel stops the wait, not the run. */
    async awaitScheduledRun(input: { runId: string }): Promise<RunStatus | 'MISSING'> {
      const ctx = Context.current();
      for (;;) {
        ctx.heartbeat();
        const ended = await endedStatus(deps, input.runId);
        if (ended) return ended;
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new CancelledFailure('cancelled');
        await ctx.sleep(1_000);
      }
    },

    /** Asks the fire's run to stop (overlap `cancel_other`, or the fire cancelled from the Temporal UI). */
    async cancelFiredRun(input: { runId: string; requestedBy: string }): Promise<void> {
      await cancelFiredRun(deps, input.runId, input.requestedBy);
    },
  };
}

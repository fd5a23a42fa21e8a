// One fire of a schedule (workflows/scheduled-run.ts): an ordinary run of the schedule's resource, made the way
// the api makes one, with `created_by: schedule:<id>` and the idempotency key `schedule:<id>:<nominal time ISO>`
// (src/jobs/idempotency.ts). The run's id also derives from that key, and the runs' primary key admits it once,
// so a retried activity, a replayed workflow or a worker killed mid-fire never makes a second run.
import type { Caller } from '../caller';
import { HttpError } from '../../errors';
import { RunSchedule } from '../../persistence/entities/run-schedule';
import { Run, RUN_TERMINAL, type RunStatus } from '../../persistence/entities/run';
import { violatedUniqueIndex } from '../record-fields';
import { deleteRunSchedule } from '../../temporal/run-schedules';
import { signalCancel } from '../code/runs/cancellation';
import { createAssistantRun } from '../assistants/runs';
import { findCodeResource } from '../code/code-resources';
import { startRun, type RunsDeps } from '../code/runs/begin';
import { derivedId } from '../integrations/deliveries';
import { bodyHashOf, createIdempotently } from '../../jobs/idempotency';

/** The fire's idempotency key (the kernel's, src/jobs/idempotency.ts), shown on its run. */
export const fireKey = (scheduleId: string, nominalTime: Date) => `schedule:${scheduleId}:${nominalTime.toISOString()}`;

/** The run a fire makes: a uuid derived from the fire's key. */
export const scheduledRunId = (scheduleId: string, nominalTime: Date) =>
  derivedId(`schedule:${scheduleId}`, nominalTime.toISOString());

/** The schedule acting in its organization: what it creates says `created_by: schedule:<id>`. */
export const scheduleCaller = (s: RunSchedule): Caller => ({
  organizationId: s.organization_id,
  userId: null,
  apiKeyId: s.schedule_id,
  actor: `schedule:${s.schedule_id}`,
  runId: null,
  // The platform acting for what the organization set up: a member starts runs and jobs.
  role: 'member',
});

export type FireOutcome = { runId: string } | { skipped: string };

/**
 * Makes the run of one fire, or finds the one an earlier attempt made. A fire whose schedule row is gone
 * removes its Temporal Schedule (the two were out of step); one whose resource is gone removes the schedule
 * altogether; one that cannot run (no successful deployment, an assistant with nothing to say) is skipped
 * with the reason. Anything else (PostgreSQL or Temporal away) throws, and the activity tries again.
 */
export async function createScheduledRun(deps: RunsDeps, scheduleId: string, nominalTime: Date): Promise<FireOutcome> {
  const schedule = await deps.ds.getRepository(RunSchedule).findOneBy({ schedule_id: scheduleId });
  if (!schedule) {
    await deleteRunSchedule(deps.temporal, scheduleId);
    return { skipped: `The schedule ${scheduleId} is deleted` };
  }
  const runId = scheduledRunId(scheduleId, nominalTime);
  if (await deps.ds.getRepository(Run).existsBy({ run_id: runId })) return { runId };
  const caller = scheduleCaller(schedule);
  // The kernel's idempotency key of the fire, shown on the run (the derived run id stays the guard after the
  // key's lifetime).
  const key = fireKey(scheduleId, nominalTime);
  const claim = {
    organizationId: schedule.organization_id,
    operation: 'ScheduledRun',
    target: scheduleId,
    key,
    bodyHash: bodyHashOf({ scheduleId, nominalTime: nominalTime.toISOString() }),
    ttlSeconds: deps.config.idempotencyTtlSeconds,
  };
  const create = async () => {
    if (schedule.resource_kind === 'assistant') {
      const input = typeof schedule.input === 'string' ? schedule.input : undefined;
      await createAssistantRun(deps, caller, schedule.resource_id, { input, args: schedule.args }, runId);
    } else {
      const resource = await findCodeResource(deps.ds, caller, schedule.resource_kind, schedule.resource_id);
      const input = schedule.resource_kind === 'function' ? { body: schedule.input ?? null, query_params: {} } : null;
      await startRun(deps, caller, resource, { args: schedule.args, envVars: [], input, runId });
    }
  };
  try {
    await createIdempotently(deps.ds, claim, create, async () => undefined, deps.temporal);
  } catch (err) {
    // Two attempts at once (an activity retried while the first still ran): the first one's run stands.
    if (violatedUniqueIndex(err) !== undefined) return { runId };
    if (!(err instanceof HttpError)) throw err;
    if (err.status === 404) {
      await deleteRunSchedule(deps.temporal, scheduleId);
      await deps.ds.getRepository(RunSchedule).delete({ schedule_id: scheduleId });
      return { skipped: `The ${schedule.resource_kind} ${schedule.resource_id} is deleted; so is its schedule` };
    }
    if (err.status === 409 || err.status === 400) return { skipped: err.message };
    throw err;
  }
  return { runId };
}

/** The run's status once it ended; undefined while it is open ('MISSING': deleted with its resource). */
export async function endedStatus(
  deps: Pick<RunsDeps, 'ds'>,
  runId: string,
): Promise<RunStatus | 'MISSING' | undefined> {
  const run = await deps.ds.getRepository(Run).findOne({ where: { run_id: runId }, select: { status: true } });
  if (!run) return 'MISSING';
  return RUN_TERMINAL.includes(run.status) ? run.status : undefined;
}

/** Cancels the run of a fire (overlap `cancel_other`: a newer fire replaces it); a run already ended stays as it is. */
export async function cancelFiredRun(deps: RunsDeps, runId: string, requestedBy: string): Promise<void> {
  const run = await deps.ds
    .getRepository(Run)
    .findOne({ where: { run_id: runId }, select: { run_id: true, kind: true } });
  if (run) await signalCancel(deps.temporal, run, requestedBy);
}

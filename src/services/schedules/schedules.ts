// Schedules of structures, functions and assistants (docs/run-control.md#schedules): CRUD, pause, resume and
// trigger. The row (run_schedules) is what the api answers; the Temporal Schedule (src/temporal/run-schedules.ts)
// is what fires. Each change writes the row in a transaction that commits only once Temporal took the change,
// so a failed Temporal call leaves the row as it was (503, try again). The other way round (Temporal changed,
// the commit failed) heals itself: a create or update repeated converges (create of an existing schedule
// updates it, update of a missing one creates it), and a schedule whose row is gone deletes itself at its
// next fire (src/services/schedules/fire.ts).
import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { Caller } from '../caller';
import { badRequest } from '../../errors';
import { RunSchedule, type OverlapPolicy, type ScheduleTarget } from '../../persistence/entities/run-schedule';
import { insertRow } from '../../persistence/direct-sql';
import { isUnavailable } from '../../persistence/unavailable';
import type { PageRequest } from '../../persistence/pagination';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import {
  createRunSchedule,
  deleteRunSchedule,
  nextFireTimes,
  triggerRunSchedule,
  updateRunSchedule,
  type RunScheduleSpec,
} from '../../temporal/run-schedules';
import { parseScheduleExpression } from '../../temporal/user-schedules';
import { findAssistant } from '../assistants/assistants';
import { findCodeResource } from '../code/code-resources';
import { checkExecStrings, type RunsDeps } from '../code/runs/begin';

export interface ScheduleFields {
  schedule_expression?: string;
  time_zone?: string;
  args?: string[];
  input?: unknown;
  enabled?: boolean;
  overlap_policy?: OverlapPolicy;
  catchup_window_seconds?: number;
}

const FIELD_NAMES = [
  'schedule_expression',
  'time_zone',
  'args',
  'input',
  'enabled',
  'overlap_policy',
  'catchup_window_seconds',
] as const satisfies ReadonlyArray<keyof ScheduleFields>;

export const DEFAULT_CATCHUP_WINDOW_SECONDS = 60;

/** The resource a schedule runs (404 when it is not the caller's), with its name for Temporal's summary. */
async function findTarget(deps: RunsDeps, caller: Caller, kind: ScheduleTarget, resourceId: string) {
  if (kind === 'assistant') return { name: (await findAssistant(deps.ds, caller, resourceId)).name };
  return { name: (await findCodeResource(deps.ds, caller, kind, resourceId)).name };
}

/** An IANA zone name (Region/City, UTC, Etc/GMT+5) that the platform knows; not an offset. */
export function checkTimeZone(zone: string, path = '/body/time_zone'): void {
  let known = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(zone);
  try {
    if (known) new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    known = false;
  }
  if (!known)
    throw badRequest(`time_zone "${zone.slice(0, 100)}" is not an IANA time zone (e.g. UTC, Europe/Paris)`, path);
}

/** What each kind takes: structures args, functions an input (the event body), assistants input and args. */
function checkFields(kind: ScheduleTarget, s: Pick<RunSchedule, 'args' | 'input'>): void {
  if (kind === 'structure' && s.input != null) throw badRequest('A structure takes `args`, not `input`', '/body/input');
  if (kind === 'function' && s.args.length)
    throw badRequest("A function takes `input` (its event's body), not `args`", '/body/args');
  if (kind === 'assistant' && s.input != null && typeof s.input !== 'string')
    throw badRequest("An assistant's `input` is a string", '/body/input');
  checkExecStrings(s.args, [], '/body');
}

const specOf = (s: RunSchedule, resourceName: string): RunScheduleSpec => ({
  scheduleId: s.schedule_id,
  organizationId: s.organization_id,
  resourceKind: s.resource_kind,
  resourceId: s.resource_id,
  resourceName,
  expression: s.schedule_expression,
  timeZone: s.time_zone,
  enabled: s.enabled,
  overlap: s.overlap_policy,
  catchupWindowSeconds: s.catchup_window_seconds,
});

export async function createSchedule(
  deps: RunsDeps,
  caller: Caller,
  kind: ScheduleTarget,
  resourceId: string,
  fields: ScheduleFields & { schedule_expression: string },
): Promise<RunSchedule> {
  const target = await findTarget(deps, caller, kind, resourceId);
  const now = new Date();
  const row: RunSchedule = {
    schedule_id: randomUUID(),
    organization_id: caller.organizationId,
    resource_kind: kind,
    resource_id: resourceId,
    schedule_expression: fields.schedule_expression,
    time_zone: fields.time_zone ?? 'UTC',
    args: fields.args ?? [],
    input: fields.input ?? null,
    enabled: fields.enabled ?? true,
    overlap_policy: fields.overlap_policy ?? 'skip',
    catchup_window_seconds: fields.catchup_window_seconds ?? DEFAULT_CATCHUP_WINDOW_SECONDS,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  validate(row, deps.config.scheduleMinIntervalSeconds);
  await deps.ds.transaction(async (em) => {
    await insertRow(em, RunSchedule, row);
    await createRunSchedule(deps.temporal, deps.config.temporal.taskQueue, specOf(row, target.name));
  });
  return row;
}

function validate(row: RunSchedule, minIntervalSeconds: number): void {
  const path = '/body/schedule_expression';
  const parsed = parseScheduleExpression(row.schedule_expression, path, 'runs');
  // Only a rate in seconds can be shorter than a minute (SCHEDULE_MIN_INTERVAL_SECONDS is at most 60).
  const seconds = 'every' in parsed ? /^(\d+) seconds$/.exec(parsed.every) : null;
  if (seconds && Number(seconds[1]) < minIntervalSeconds)
    throw badRequest(
      `schedule_expression "${row.schedule_expression}" fires more often than the platform allows: at most once ` +
        `every ${minIntervalSeconds} seconds (SCHEDULE_MIN_INTERVAL_SECONDS)`,
      path,
    );
  checkTimeZone(row.time_zone);
  checkFields(row.resource_kind, row);
}

export async function findSchedule(
  deps: RunsDeps,
  caller: Caller,
  kind: ScheduleTarget,
  resourceId: string,
  scheduleId: string,
): Promise<{ schedule: RunSchedule; resourceName: string }> {
  const { name } = await findTarget(deps, caller, kind, resourceId);
  const schedule = await findInOrg(
    deps.ds,
    RunSchedule,
    caller.organizationId,
    { schedule_id: scheduleId, resource_id: resourceId, resource_kind: kind },
    `Schedule ${scheduleId}`,
  );
  return { schedule, resourceName: name };
}

export async function listSchedules(
  deps: RunsDeps,
  caller: Caller,
  kind: ScheduleTarget,
  resourceId: string,
  page: PageRequest,
) {
  await findTarget(deps, caller, kind, resourceId);
  return pageInOrg(
    deps.ds,
    RunSchedule,
    caller.organizationId,
    page,
    { resource_id: resourceId, resource_kind: kind },
    { created_at: 'DESC', schedule_id: 'DESC' },
  );
}

/** Changes the given fields (`enabled: false` pauses, `true` resumes). */
export async function updateSchedule(
  deps: RunsDeps,
  caller: Caller,
  kind: ScheduleTarget,
  resourceId: string,
  scheduleId: string,
  fields: ScheduleFields,
): Promise<RunSchedule> {
  const { schedule, resourceName } = await findSchedule(deps, caller, kind, resourceId, scheduleId);
  const changed: RunSchedule = { ...schedule, updated_at: new Date() };
  for (const key of FIELD_NAMES) {
    if (fields[key] !== undefined) Object.assign(changed, { [key]: fields[key] });
  }
  validate(changed, deps.config.scheduleMinIntervalSeconds);
  await deps.ds.transaction(async (em) => {
    await em.getRepository(RunSchedule).save(changed);
    await updateRunSchedule(deps.temporal, deps.config.temporal.taskQueue, specOf(changed, resourceName));
  });
  return changed;
}

/** Removes the Temporal Schedule, then the row (a repeated delete after a failure in between finishes it). */
export async function deleteSchedule(
  deps: RunsDeps,
  caller: Caller,
  kind: ScheduleTarget,
  resourceId: string,
  scheduleId: string,
): Promise<void> {
  const { schedule } = await findSchedule(deps, caller, kind, resourceId, scheduleId);
  await deleteRunSchedule(deps.temporal, schedule.schedule_id);
  await deps.ds.getRepository(RunSchedule).delete({ schedule_id: schedule.schedule_id });
}

/**
 * Fires now (a run with the schedule's args, nominal time now); a Temporal Schedule lost is created first. No
 * describe before: that is a query of the scheduler workflow, which waits for Temporal's own worker under load.
 */
export async function triggerSchedule(
  deps: RunsDeps,
  caller: Caller,
  kind: ScheduleTarget,
  resourceId: string,
  scheduleId: string,
): Promise<RunSchedule> {
  const { schedule, resourceName } = await findSchedule(deps, caller, kind, resourceId, scheduleId);
  try {
    await triggerRunSchedule(deps.temporal, scheduleId);
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await createRunSchedule(deps.temporal, deps.config.temporal.taskQueue, specOf(schedule, resourceName));
    await triggerRunSchedule(deps.temporal, scheduleId);
  }
  return schedule;
}

/**
 * The schedule's next fire times from Temporal ([] while paused or when Temporal lost the schedule); null when
 * Temporal did not answer in time. The row is the answer, so a slow describe (a query its own worker must take)
 * leaves only the fire times unknown.
 */
export async function upcomingFires(deps: RunsDeps, schedule: RunSchedule): Promise<Date[] | null> {
  if (!schedule.enabled) return [];
  try {
    return (await nextFireTimes(deps.temporal, schedule.schedule_id)) ?? [];
  } catch (err) {
    if (isUnavailable(err)) return null;
    throw err;
  }
}

// The Temporal Schedules of structures, functions and assistants (docs/run-control.md#schedules): the one place
// they are created, changed, paused, triggered, described and removed. Schedule `run-schedule-<uuid>` starts
// `scheduledRunWorkflow` (workflow id `scheduled-run-<uuid>-<nominal time>`: Temporal appends the time), which
// creates the run from the schedule's row and lives as long as the run, so the overlap policy is about runs.
// Searchable in the Temporal UI like every workflow: TarmacResourceKind="run-schedule", TarmacResourceId=<uuid>.
import { Client, ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleOptions } from '@temporalio/client';
import type { OverlapPolicy, ScheduleTarget } from '../persistence/entities/run-schedule';
import { WORKFLOW_TYPES, type ScheduledRunInput } from './contracts';
import { ORGANIZATION_ID, RESOURCE_ID, RESOURCE_KIND } from './search-attributes';
import { parseScheduleExpression } from './user-schedules';

export const RUN_SCHEDULE_KIND = 'run-schedule';

export const runScheduleId = (scheduleId: string) => `${RUN_SCHEDULE_KIND}-${scheduleId}`;
/** The fire's workflow id before Temporal appends `-<nominal time>` to it. */
export const scheduledRunWorkflowPrefix = (scheduleId: string) => `scheduled-run-${scheduleId}`;

/** An unreachable Temporal answers the api's caller with 503 after this long (like a run's start). */
const CALL_DEADLINE_MS = 5_000;
/**
 * The SDK's update describes the schedule first: a query of its scheduler workflow, which Temporal's own worker
 * answers, and which took more than 5 s under the schema fuzzer's load. A change is worth waiting longer for.
 */
const UPDATE_DEADLINE_MS = 15_000;
const bounded = <T>(client: Client, call: () => Promise<T>, deadlineMs = CALL_DEADLINE_MS) =>
  client.connection.withDeadline(Date.now() + deadlineMs, call);

const OVERLAP = {
  skip: 'SKIP',
  buffer_one: 'BUFFER_ONE',
  allow_all: 'ALLOW_ALL',
  cancel_other: 'CANCEL_OTHER',
} as const satisfies Record<OverlapPolicy, string>;

/** What Temporal is told of one schedule (the row's fields that decide when it fires). */
export interface RunScheduleSpec {
  scheduleId: string;
  organizationId: string;
  resourceKind: ScheduleTarget;
  resourceId: string;
  resourceName: string;
  expression: string;
  timeZone: string;
  enabled: boolean;
  overlap: OverlapPolicy;
  catchupWindowSeconds: number;
}

function optionsOf(s: RunScheduleSpec, taskQueue: string) {
  const parsed = parseScheduleExpression(s.expression, '/body/schedule_expression', 'runs');
  const input: ScheduledRunInput = { scheduleId: s.scheduleId, organizationId: s.organizationId };
  const attributes = [
    { key: RESOURCE_ID, value: s.scheduleId },
    { key: ORGANIZATION_ID, value: s.organizationId },
    { key: RESOURCE_KIND, value: RUN_SCHEDULE_KIND },
  ];
  const what = `${s.resourceKind} ${s.resourceName} (${s.resourceId})`;
  return {
    scheduleId: runScheduleId(s.scheduleId),
    spec:
      'cron' in parsed
        ? { cronExpressions: [parsed.cron], timezone: s.timeZone }
        : { intervals: [{ every: parsed.every }], timezone: s.timeZone },
    action: {
      type: 'startWorkflow' as const,
      workflowType: WORKFLOW_TYPES.scheduledRun,
      workflowId: scheduledRunWorkflowPrefix(s.scheduleId),
      taskQueue,
      args: [input],
      typedSearchAttributes: attributes,
      staticSummary: `Scheduled run of ${what}`,
    },
    policies: { overlap: OVERLAP[s.overlap], catchupWindow: `${s.catchupWindowSeconds} seconds` },
    typedSearchAttributes: attributes,
    memo: {
      resource_kind: RUN_SCHEDULE_KIND,
      resource_id: s.scheduleId,
      organization_id: s.organizationId,
      target: { kind: s.resourceKind, id: s.resourceId },
    },
    state: { paused: !s.enabled, note: `${s.expression} (${s.timeZone}) of ${what}` },
  } satisfies ScheduleOptions;
}

/** Creates the schedule; one that exists already (a retried create) is brought in line instead. */
export async function createRunSchedule(client: Client, taskQueue: string, s: RunScheduleSpec): Promise<void> {
  try {
    await bounded(client, () => client.schedule.create(optionsOf(s, taskQueue)));
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await updateRunSchedule(client, taskQueue, s);
  }
}

/** Changes spec, policies and paused state; a schedule missing in Temporal is created again (reconciled). */
export async function updateRunSchedule(client: Client, taskQueue: string, s: RunScheduleSpec): Promise<void> {
  const options = optionsOf(s, taskQueue);
  const handle = client.schedule.getHandle(options.scheduleId);
  try {
    await bounded(
      client,
      () =>
        handle.update((prev) => ({
          ...prev,
          spec: options.spec,
          action: options.action,
          policies: { ...prev.policies, ...options.policies },
          // The paused state too: the scheduler workflow applies a pause that arrives with an update before the
          // update, whose state then wins (a PATCH of enabled:false right after a resume stayed unpaused once).
          state: { ...prev.state, note: options.state.note, paused: !s.enabled },
        })),
      UPDATE_DEADLINE_MS,
    );
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await bounded(client, () => client.schedule.create(options));
    return;
  }
  // And its own call, which the Temporal UI shows with its note; both are idempotent.
  await bounded(client, () => (s.enabled ? handle.unpause(options.state.note) : handle.pause(options.state.note)));
}

export async function deleteRunSchedule(client: Client, scheduleId: string): Promise<void> {
  try {
    await bounded(client, () => client.schedule.getHandle(runScheduleId(scheduleId)).delete());
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Fires once now (nominal time: now), whether paused or not; the overlap policy applies. */
export async function triggerRunSchedule(client: Client, scheduleId: string): Promise<void> {
  await bounded(client, () => client.schedule.getHandle(runScheduleId(scheduleId)).trigger());
}

/** The next `count` fire times as Temporal computes them (describe), [] while paused; null: no such schedule. */
export async function nextFireTimes(client: Client, scheduleId: string, count = 5): Promise<Date[] | null> {
  try {
    const d = await bounded(client, () => client.schedule.getHandle(runScheduleId(scheduleId)).describe());
    return d.state.paused ? [] : d.info.nextActionTimes.slice(0, count);
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
}

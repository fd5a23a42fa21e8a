// Schedules of structures, functions and assistants (docs/run-control.md#schedules): CRUD, pause, resume and
// trigger now, under /{structures,functions,assistants}/{id}/schedules. Each fire is an ordinary run with
// `created_by: schedule:<schedule_id>`.
import { OVERLAP_POLICIES, type RunSchedule, type ScheduleTarget } from '../../persistence/entities/run-schedule';
import { iso } from '../../persistence/scoped';
import {
  createSchedule,
  deleteSchedule,
  findSchedule,
  listSchedules,
  triggerSchedule,
  updateSchedule,
  upcomingFires,
  type ScheduleFields,
} from '../../services/schedules/schedules';
import type { RunsDeps } from '../../services/code/runs/begin';
import { RUN_SCHEDULE_EXPRESSION_PATTERN, SCHEDULE_FORMS } from '../../temporal/user-schedules';
import { route } from '../http/route';
import { defineSchema, JsonValue, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Schedules';
const NEXT_FIRES = 5;

const fields = {
  schedule_expression: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    pattern: RUN_SCHEDULE_EXPRESSION_PATTERN,
    description: `When it fires: rate(<N> second|seconds) or ${SCHEDULE_FORMS} (cron fields in \`time_zone\`).`,
  },
  time_zone: { ...str(1, 64), description: 'An IANA time zone the cron fields are read in (default UTC).' },
  args: {
    type: 'array',
    items: { type: 'string' },
    maxItems: 1000,
    description: "Structures and assistants: the run's args (default []).",
  },
  input: {
    anyOf: [JsonValue, { type: 'null' }],
    description:
      "Functions: the event's body each run gets; assistants: the run's input (a string). Not for structures.",
  },
  enabled: { type: 'boolean', description: 'false: paused (default true).' },
  overlap_policy: {
    type: 'string',
    enum: OVERLAP_POLICIES,
    description:
      'When a fire comes while the last run is still open: skip (default) the new one, buffer_one (run it after, at most one waiting), allow_all, or cancel_other (cancel the open run, then start).',
  },
  catchup_window_seconds: {
    type: 'integer',
    minimum: 10,
    maximum: 604_800,
    description: 'Fires missed while Temporal was away are still made if at most this late (default 60).',
  },
} as const;

const CreateBody = defineSchema('CreateScheduleRequest', {
  type: 'object',
  required: ['schedule_expression'],
  properties: fields,
});
const UpdateBody = defineSchema('UpdateScheduleRequest', { type: 'object', properties: fields });

const ScheduleSchema = defineSchema('Schedule', {
  type: 'object',
  required: [
    'schedule_id',
    'resource_kind',
    'resource_id',
    'schedule_expression',
    'time_zone',
    'args',
    'enabled',
    'overlap_policy',
    'catchup_window_seconds',
    'next_fire_times',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    schedule_id: uuid,
    resource_kind: { type: 'string', enum: ['structure', 'function', 'assistant'] },
    resource_id: uuid,
    schedule_expression: { type: 'string' },
    time_zone: { type: 'string' },
    args: { type: 'array', items: { type: 'string' } },
    input: { anyOf: [JsonValue, { type: 'null' }] },
    enabled: { type: 'boolean' },
    overlap_policy: { type: 'string', enum: OVERLAP_POLICIES },
    catchup_window_seconds: { type: 'integer' },
    next_fire_times: {
      type: ['array', 'null'],
      items: timestamp,
      description:
        `The next ${NEXT_FIRES} fire times as Temporal computes them; [] while paused; null when Temporal did not ` +
        'describe the schedule in time (the rest of the answer is the row, and stands).',
    },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

async function present(deps: RunsDeps, s: RunSchedule) {
  return {
    schedule_id: s.schedule_id,
    resource_kind: s.resource_kind,
    resource_id: s.resource_id,
    schedule_expression: s.schedule_expression,
    time_zone: s.time_zone,
    args: s.args,
    ...(s.input != null ? { input: s.input } : {}),
    enabled: s.enabled,
    overlap_policy: s.overlap_policy,
    catchup_window_seconds: s.catchup_window_seconds,
    next_fire_times: (await upcomingFires(deps, s))?.slice(0, NEXT_FIRES).map((d) => d.toISOString()) ?? null,
    organization_id: s.organization_id,
    created_by: s.created_by,
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}

const TARGETS: Array<{ kind: ScheduleTarget; plural: string; label: string }> = [
  { kind: 'structure', plural: 'structures', label: 'Structure' },
  { kind: 'function', plural: 'functions', label: 'Function' },
  { kind: 'assistant', plural: 'assistants', label: 'Assistant' },
];

for (const { kind, plural, label } of TARGETS) {
  const idParam = `${kind}_id`;
  const base = `/${plural}/{${idParam}}/schedules`;
  const one = `${base}/{schedule_id}`;
  const resourcePath = { [idParam]: uuid };
  const schedulePath = { [idParam]: uuid, schedule_id: uuid };
  const answer = { 200: { description: 'Schedule', schema: ScheduleSchema } };

  route({
    operationId: `List${label}Schedules`,
    method: 'get',
    path: base,
    tag: TAG,
    params: resourcePath,
    paged: true,
    summary: `The ${kind}'s schedules, newest first.`,
    responses: {
      200: { description: 'Schedules', schema: pageOf(`${label}ScheduleList`, 'schedules', ScheduleSchema) },
    },
    handler: async ({ deps, caller, params, page }) => {
      const { items, pagination } = await listSchedules(deps, caller, kind, params[idParam], page);
      return { status: 200, body: { schedules: await Promise.all(items.map((s) => present(deps, s))), pagination } };
    },
  });

  route({
    operationId: `Create${label}Schedule`,
    method: 'post',
    path: base,
    tag: TAG,
    params: resourcePath,
    body: CreateBody,
    bodyRequired: true,
    summary: `Runs the ${kind} on a schedule (a Temporal Schedule); each fire is a run with \`created_by: schedule:<schedule_id>\`, one per nominal time.`,
    responses: { 201: { description: 'Schedule', schema: ScheduleSchema } },
    handler: async ({ deps, caller, params, body }) => {
      const schedule = await createSchedule(deps, caller, kind, params[idParam], body);
      return { status: 201, body: await present(deps, schedule) };
    },
  });

  route({
    operationId: `Get${label}Schedule`,
    method: 'get',
    path: one,
    tag: TAG,
    params: schedulePath,
    summary: 'A schedule, with its next fire times.',
    responses: answer,
    handler: async ({ deps, caller, params }) => {
      const { schedule } = await findSchedule(deps, caller, kind, params[idParam], params.schedule_id);
      return { status: 200, body: await present(deps, schedule) };
    },
  });

  route({
    operationId: `Update${label}Schedule`,
    method: 'patch',
    path: one,
    tag: TAG,
    params: schedulePath,
    body: UpdateBody,
    summary: 'Changes the given fields.',
    responses: answer,
    handler: async ({ deps, caller, params, body }) => {
      const schedule = await updateSchedule(deps, caller, kind, params[idParam], params.schedule_id, body);
      return { status: 200, body: await present(deps, schedule) };
    },
  });

  route({
    operationId: `Delete${label}Schedule`,
    method: 'delete',
    path: one,
    tag: TAG,
    params: schedulePath,
    summary: 'Deletes the schedule; runs it made stay (an open one goes on).',
    responses: { 204: { description: 'Deleted' } },
    handler: async ({ deps, caller, params }) => {
      await deleteSchedule(deps, caller, kind, params[idParam], params.schedule_id);
      return { status: 204 };
    },
  });

  const toggles: Array<{ verb: string; name: string; enabled: boolean; summary: string }> = [
    { verb: 'pause', name: 'Pause', enabled: false, summary: 'Stops firing until resumed (`enabled: false`).' },
    {
      verb: 'resume',
      name: 'Resume',
      enabled: true,
      summary: 'Fires again from the next fire time (`enabled: true`).',
    },
  ];
  for (const t of toggles) {
    route({
      operationId: `${t.name}${label}Schedule`,
      method: 'post',
      path: `${one}/${t.verb}`,
      tag: TAG,
      params: schedulePath,
      summary: t.summary,
      responses: answer,
      handler: async ({ deps, caller, params }) => {
        const fields: ScheduleFields = { enabled: t.enabled };
        const schedule = await updateSchedule(deps, caller, kind, params[idParam], params.schedule_id, fields);
        return { status: 200, body: await present(deps, schedule) };
      },
    });
  }

  route({
    operationId: `Trigger${label}Schedule`,
    method: 'post',
    path: `${one}/trigger`,
    tag: TAG,
    params: schedulePath,
    needsDiskSpace: true,
    summary:
      'Fires once now, paused or not (nominal time: now; the overlap policy applies). The run follows within a moment, `created_by: schedule:<schedule_id>`.',
    responses: { 202: { description: 'Schedule', schema: ScheduleSchema } },
    handler: async ({ deps, caller, params }) => {
      const schedule = await triggerSchedule(deps, caller, kind, params[idParam], params.schedule_id);
      return { status: 202, body: await present(deps, schedule) };
    },
  });
}

// Schedules users set (`schedule_expression` of data connectors and knowledge bases): the one parser of the
// expression forms and the one place their Temporal Schedules are created, changed and removed. A schedule
// `data-connector-<uuid>` / `knowledge-base-<uuid>` starts workflow `scheduledJobWorkflow`, which creates a
// job the way the api does (skipped while one is open); overlap SKIP keeps two from running at once. They are
// visible (and can be paused or triggered) in the Temporal UI, with the same search attributes as jobs.
import { Client, ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleOptions } from '@temporalio/client';
import { badRequest } from '../errors';
import { WORKFLOW_TYPES, type ScheduledJobInput } from './contracts';
import { ORGANIZATION_ID, RESOURCE_ID, RESOURCE_KIND } from './search-attributes';

export const SCHEDULE_FORMS =
  'rate(<N> minute|minutes|hour|hours|day|days); cron(<minute> <hour> <day-of-month> <month> <day-of-week> [*|?]) ' +
  '(the AWS form: day-of-week 1-7 = SUN-SAT, `?` for any day, no year); or a plain 5-field cron expression ' +
  '(`*/15 * * * *`, day-of-week 0-6 = SUN-SAT). Fields take *, N, N-M, lists and /step; months JAN-DEC, days SUN-SAT (upper case); UTC';

/** What Temporal is given: a cron expression (5 fields) or an interval. */
export type ScheduleSpecOf = { cron: string } | { every: string };

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface Field {
  value: string;
  min: number;
  max: number;
  names?: string[];
  /** `?` allowed (day-of-month and day-of-week). */
  any?: boolean;
}
const MINUTE: Field = { value: '[0-5]?\\d', min: 0, max: 59 };
const HOUR: Field = { value: '[01]?\\d|2[0-3]', min: 0, max: 23 };
const DOM: Field = { value: '0?[1-9]|[12]\\d|3[01]', min: 1, max: 31, any: true };
const MONTH: Field = { value: `0?[1-9]|1[0-2]|${MONTHS.join('|')}`, min: 1, max: 12, names: MONTHS };
const DOW: Field = { value: `[0-6]|${DAYS.join('|')}`, min: 0, max: 6, names: DAYS, any: true };
/** The cron(...) form counts days of the week 1-7 (SUN-SAT). */
const DOW_AWS: Field = { ...DOW, value: `[1-7]|${DAYS.join('|')}`, min: 1, max: 7 };

const fieldPattern = (f: Field) => {
  const item = `(?:\\*${f.any ? '|\\?' : ''}|(?:${f.value})(?:-(?:${f.value}))?)(?:/[1-9]\\d?)?`;
  return `${item}(?:,${item})*`;
};
const fieldsPattern = (fields: Field[]) => fields.map(fieldPattern).join('\\s+');
const RATE = '^rate\\(\\s*[1-9]\\d{0,5}\\s+(?:minutes?|hours?|days?)\\s*\\)$';
const CRON_AWS = `^cron\\(\\s*${fieldsPattern([MINUTE, HOUR, DOM, MONTH, DOW_AWS])}(?:\\s+[*?])?\\s*\\)$`;
const CRON = `^\\s*${fieldsPattern([MINUTE, HOUR, DOM, MONTH, DOW])}\\s*$`;

/** Every accepted expression matches it (the request schemas carry it); whatever matches it parses. */
export const SCHEDULE_EXPRESSION_PATTERN = `${RATE}|${CRON_AWS}|${CRON}`;
const MATCHES = new RegExp(SCHEDULE_EXPRESSION_PATTERN);
/** Schedules of runs (src/temporal/run-schedules.ts) also take `rate(<N> second|seconds)`. */
export const RUN_SCHEDULE_EXPRESSION_PATTERN = `^rate\\(\\s*[1-9]\\d{0,5}\\s+seconds?\\s*\\)$|${SCHEDULE_EXPRESSION_PATTERN}`;
const MATCHES_RUN = new RegExp(RUN_SCHEDULE_EXPRESSION_PATTERN);

/** One cron field normalized for Temporal: names as numbers, `?` as `*`, 1-7 as 0-6, a range past the end wrapped. */
function cronField(text: string, f: Field): string {
  const num = (v: string) => {
    const named = f.names?.indexOf(v) ?? -1;
    if (named >= 0) return f.names === MONTHS ? named + 1 : named + f.min;
    return Number(v);
  };
  const shift = f === DOW_AWS ? 1 : 0;
  return text
    .split(',')
    .flatMap((part) => {
      const [range, step] = part.split('/');
      const suffix = step === undefined ? '' : `/${Number(step)}`;
      if (range === '*' || range === '?') return [`*${suffix}`];
      const [a, b] = range.split('-');
      const lo = num(a) - shift;
      // N/step: from N to the end of the field, every step.
      if (b === undefined) return [step === undefined ? `${lo}` : `${lo}-${f.max - shift}${suffix}`];
      const hi = num(b) - shift;
      // FRI-MON, 22-2: wraps past the end of the field.
      if (hi < lo) return [`${lo}-${f.max - shift}${suffix}`, `${f.min - shift}-${hi}${suffix}`];
      return [`${lo}-${hi}${suffix}`];
    })
    .join(',');
}

/** Parses a schedule expression; a 400 naming the accepted forms otherwise. `path`: where it is in the request. */
export function parseScheduleExpression(
  expression: string,
  path = '/body/schedule_expression',
  /** `runs`: seconds too (rate(<N> seconds)). */
  forms: 'jobs' | 'runs' = 'jobs',
): ScheduleSpecOf {
  if (!(forms === 'runs' ? MATCHES_RUN : MATCHES).test(expression)) {
    const accepted = forms === 'runs' ? `rate(<N> second|seconds); ${SCHEDULE_FORMS}` : SCHEDULE_FORMS;
    throw badRequest(
      `schedule_expression "${expression.slice(0, 200)}" is not one of the accepted forms: ${accepted}`,
      path,
    );
  }
  const text = expression.trim();
  const rate = /^rate\(\s*(\d+)\s+(second|minute|hour|day)s?\s*\)$/.exec(text);
  if (rate) return { every: `${Number(rate[1])} ${rate[2]}s` };
  const aws = text.startsWith('cron(');
  const fields = (aws ? text.slice(5, -1) : text).trim().split(/\s+/).slice(0, 5);
  const kinds = [MINUTE, HOUR, DOM, MONTH, aws ? DOW_AWS : DOW];
  return { cron: fields.map((f, i) => cronField(f, kinds[i])).join(' ') };
}

export type ScheduledTarget = ScheduledJobInput['target'];

export const userScheduleId = (target: ScheduledTarget, id: string) => `${target}-${id}`;

/** Creates or replaces the schedule of a data connector or knowledge base; removes it when `expression` is null. */
export async function putUserSchedule(
  client: Client,
  taskQueue: string,
  s: { target: ScheduledTarget; id: string; organizationId: string; name: string; expression: string | null },
): Promise<void> {
  const scheduleId = userScheduleId(s.target, s.id);
  if (s.expression === null) return deleteUserSchedule(client, s.target, s.id);
  const parsed = parseScheduleExpression(s.expression);
  const input: ScheduledJobInput = { target: s.target, id: s.id, organizationId: s.organizationId };
  const attributes = [
    { key: RESOURCE_ID, value: s.id },
    { key: ORGANIZATION_ID, value: s.organizationId },
    { key: RESOURCE_KIND, value: s.target },
  ];
  const options = {
    scheduleId,
    spec: 'cron' in parsed ? { cronExpressions: [parsed.cron] } : { intervals: [{ every: parsed.every }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: WORKFLOW_TYPES.scheduledJob,
      workflowId: `scheduled-${scheduleId}`,
      taskQueue,
      args: [input],
      typedSearchAttributes: attributes,
      staticSummary: `Scheduled job of ${s.target} ${s.name} (${s.id})`,
    },
    policies: { overlap: 'SKIP' as const, catchupWindow: '1 minute' },
    typedSearchAttributes: attributes,
    memo: { resource_kind: s.target, resource_id: s.id, organization_id: s.organizationId },
    state: { note: `schedule_expression: ${s.expression}` },
  } satisfies ScheduleOptions;
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({
      ...prev,
      spec: options.spec,
      action: options.action,
      policies: { ...prev.policies, overlap: 'SKIP' },
      state: { ...prev.state, note: options.state.note },
    }));
  }
}

export async function deleteUserSchedule(client: Client, target: ScheduledTarget, id: string): Promise<void> {
  try {
    await client.schedule.getHandle(userScheduleId(target, id)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

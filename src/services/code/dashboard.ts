// The structures dashboard: aggregates over the organization's structure runs and structure deployments,
// computed in SQL (one statement per gauge family, run in parallel).
//
// Window: rows whose created_at is in [start, end). Conventions (also in docs/code-runs.md):
// - A run has ended when completed_at is set; its duration is completed_at - started_at (runs that never
//   started count in the error rate but have no duration).
// - Error rate = (FAILED + ERROR) / ended (SUCCEEDED, FAILED, ERROR, CANCELLED); 0 when nothing ended.
//   Error type = status_detail.reason, else the status.
// - Active = QUEUED, STARTING, RUNNING (deployments: QUEUED, DEPLOYING).
// - Activity durations of ended runs that started: `startup` = started_at - created_at (queued and
//   starting), `execution` = completed_at - started_at.
// - Tokens, from the run's events, each counted once:
//   - a `FinishPromptEvent` (what griptape's prompt drivers publish after every model call, posted by its
//     GriptapeCloudEventListenerDriver with the event's to_dict() as the payload): payload.input_token_count
//     and payload.output_token_count (numbers; null, as griptape sends when the provider reported no usage,
//     counts 0), the model payload.model;
//   - any other event whose payload carries `usage: {input_tokens, output_tokens}` (numbers); the model is
//     payload.model, else payload.usage.model.
//   Model "unknown" when none is named.
// - Deployment durations: completed_at - created_at of ended deployments.
import type { DataSource } from 'typeorm';

export type DashboardPeriod = 'minute' | 'hour' | 'day' | 'week' | 'month';
export const DASHBOARD_PERIODS: DashboardPeriod[] = ['minute', 'hour', 'day', 'week', 'month'];

export interface DashboardQuery {
  organizationId: string;
  start: Date;
  end: Date;
  period: DashboardPeriod;
  /** Only these structures; undefined for all. */
  structureIds?: string[];
}

const OPEN_RUN = `('QUEUED', 'STARTING', 'RUNNING')`;
const ENDED_RUN = `('SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED')`;
const FAILED = `('FAILED', 'ERROR')`;

// $1 organization, $2 start, $3 end, $4 structure ids (uuid[] or null)
const RUNS = `
  SELECT r.* FROM runs r
   WHERE r.organization_id = $1 AND r.kind = 'structure'
     AND r.created_at >= $2 AND r.created_at < $3
     AND ($4::uuid[] IS NULL OR r.resource_id = ANY($4::uuid[]))`;
const DEPLOYMENTS = `
  SELECT d.* FROM deployments d
   WHERE d.organization_id = $1 AND d.resource_kind = 'structure'
     AND d.created_at >= $2 AND d.created_at < $3
     AND ($4::uuid[] IS NULL OR d.resource_id = ANY($4::uuid[]))`;
const SECONDS = (a: string, b: string) => `EXTRACT(EPOCH FROM (${a} - ${b}))::float8`;
/** griptape's event after every model call (griptape/events/finish_prompt_event.py), with its token counts. */
const PROMPT_EVENT = `'FinishPromptEvent'`;
/** A jsonb member as a number: 0 unless it is a JSON number. */
const NUMBER = (member: string) =>
  `CASE WHEN jsonb_typeof(${member}) = 'number' THEN (${member} #>> '{}')::float8 ELSE 0 END`;

export async function structuresDashboard(ds: DataSource, q: DashboardQuery) {
  const params = [q.organizationId, q.start, q.end, q.structureIds ?? null];
  const [[runs], errorTypes, series, [deployments], tokens] = await Promise.all([
    ds.query(
      `
      WITH w AS (${RUNS}),
           d AS (SELECT ${SECONDS('completed_at', 'started_at')} AS s, ${SECONDS('started_at', 'created_at')} AS startup
                   FROM w WHERE completed_at IS NOT NULL AND started_at IS NOT NULL)
      SELECT (SELECT count(*)::int FROM w) AS total_count,
             (SELECT count(*)::int FROM w WHERE status IN ${OPEN_RUN}) AS active_count,
             (SELECT count(*)::int FROM w WHERE status IN ${ENDED_RUN}) AS ended_count,
             (SELECT count(*)::int FROM w WHERE status IN ${FAILED}) AS failed_count,
             (SELECT coalesce(sum(s), 0) FROM d) AS total_seconds,
             (SELECT coalesce(sum(startup), 0) FROM d) AS startup_seconds,
             (SELECT coalesce(avg(s), 0) FROM d) AS seconds_avg,
             (SELECT coalesce(max(s), 0) FROM d) AS seconds_p100,
             (SELECT coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY s), 0) FROM d) AS seconds_p50`,
      params,
    ),
    ds.query(
      `
      WITH w AS (${RUNS})
      SELECT coalesce(status_detail->>'reason', status) AS error_type, count(*)::int AS count
        FROM w WHERE status IN ${FAILED}
       GROUP BY 1 ORDER BY count DESC, error_type`,
      params,
    ),
    ds.query(
      `
      WITH w AS (${RUNS})
      SELECT date_trunc($5::text, created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS time,
             min(${SECONDS('completed_at', 'started_at')}) AS seconds_p0,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY ${SECONDS('completed_at', 'started_at')}) AS seconds_p50,
             max(${SECONDS('completed_at', 'started_at')}) AS seconds_p100
        FROM w WHERE completed_at IS NOT NULL AND started_at IS NOT NULL
       GROUP BY 1 ORDER BY 1`,
      [...params, q.period],
    ),
    ds.query(
      `
      WITH w AS (${DEPLOYMENTS})
      SELECT count(*)::int AS total_count,
             count(*) FILTER (WHERE status IN ('QUEUED', 'DEPLOYING'))::int AS active_count,
             count(*) FILTER (WHERE status IN ('SUCCEEDED', 'FAILED', 'ERROR'))::int AS ended_count,
             count(*) FILTER (WHERE status IN ${FAILED})::int AS failed_count,
             coalesce(sum(${SECONDS('completed_at', 'created_at')}) FILTER (WHERE completed_at IS NOT NULL), 0) AS total_seconds
        FROM w`,
      params,
    ),
    ds.query(
      `
      WITH w AS (${RUNS}),
           u AS (SELECT coalesce(e.payload->>'model', e.payload->'usage'->>'model', 'unknown') AS model,
                        CASE WHEN e.type = ${PROMPT_EVENT} THEN ${NUMBER(`e.payload->'input_token_count'`)}
                             ELSE ${NUMBER(`e.payload->'usage'->'input_tokens'`)} END AS input,
                        CASE WHEN e.type = ${PROMPT_EVENT} THEN ${NUMBER(`e.payload->'output_token_count'`)}
                             ELSE ${NUMBER(`e.payload->'usage'->'output_tokens'`)} END AS output
                   FROM run_events e JOIN w ON w.run_id = e.run_id
                  WHERE jsonb_typeof(e.payload) = 'object'
                    AND (e.type = ${PROMPT_EVENT} OR jsonb_typeof(e.payload->'usage') = 'object'))
      SELECT model, sum(input)::float8 AS input, sum(output)::float8 AS output FROM u GROUP BY model ORDER BY model`,
      params,
    ),
  ]);

  const num = (v: unknown) => Number(v ?? 0);
  const rate = (failed: number, ended: number) => (ended > 0 ? failed / ended : 0);
  const byModel: Record<string, { input: number; output: number }> = {};
  let input = 0;
  let output = 0;
  for (const t of tokens as Array<{ model: string; input: number; output: number }>) {
    byModel[t.model] = { input: num(t.input), output: num(t.output) };
    input += num(t.input);
    output += num(t.output);
  }
  return {
    deployment_count_gauge: { active_count: deployments.active_count, total_count: deployments.total_count },
    deployment_duration_gauge: { total_seconds: num(deployments.total_seconds) },
    deployment_error_rate_gauge: { rate: rate(deployments.failed_count, deployments.ended_count) },
    duration_plot: {
      seconds_avg: num(runs.seconds_avg),
      seconds_p100: num(runs.seconds_p100),
      seconds_p50: num(runs.seconds_p50),
      timeseries: (series as Array<{ time: Date; seconds_p0: number; seconds_p50: number; seconds_p100: number }>).map(
        (s) => ({
          seconds_p0: num(s.seconds_p0),
          seconds_p100: num(s.seconds_p100),
          seconds_p50: num(s.seconds_p50),
          time: new Date(s.time).toISOString(),
        }),
      ),
    },
    error_rate_gauge: {
      error_type_counts: (errorTypes as Array<{ error_type: string; count: number }>).map((e) => ({
        count: e.count,
        error_type: e.error_type,
      })),
      rate: rate(runs.failed_count, runs.ended_count),
    },
    run_count_gauge: { active_count: runs.active_count, total_count: runs.total_count },
    run_duration_gauge: {
      activity_durations: [
        { activity_type: 'startup', seconds: num(runs.startup_seconds) },
        { activity_type: 'execution', seconds: num(runs.total_seconds) },
      ],
      total_seconds: num(runs.total_seconds),
    },
    token_count_gauge: { by_model: byModel, input, output },
  };
}

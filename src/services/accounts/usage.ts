// Usage of an organization per UTC day, from what the platform records anyway: run time (runs' started_at to
// completed_at, or now while running), model tokens (runs' usage: assistant runs and chat exchanges), bytes
// ingested (knowledge base jobs) and retrieval queries (knowledge base queries and searches, retriever queries).
// A self-hosted platform sets no quota on these: every `*_limit` is -1 (none).
import type { DataSource } from 'typeorm';
import { badRequest } from '../../errors';

const DAY_MS = 24 * 3600 * 1000;
/** The longest period one request may ask for. */
export const MAX_USAGE_DAYS = 366;
const NO_LIMIT = -1;

export interface UsageDay {
  date: string;
  runtime_seconds: number;
  input_tokens: number;
  output_tokens: number;
  bytes_ingested: number;
  rag_queries: number;
}

/** The period of a request: `start_date` and `end_date` (both inclusive, UTC days); default the current month. */
export function usagePeriod(now: Date, startDate?: string, endDate?: string): { start: Date; end: Date } {
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const start = startDate ? new Date(`${startDate}T00:00:00Z`) : monthStart;
  const end = endDate
    ? new Date(Date.parse(`${endDate}T00:00:00Z`) + DAY_MS)
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) throw badRequest('Dates are YYYY-MM-DD');
  if (end <= start) throw badRequest('end_date is before start_date', '/query/end_date');
  if (end.getTime() - start.getTime() > MAX_USAGE_DAYS * DAY_MS)
    throw badRequest(`A usage period has at most ${MAX_USAGE_DAYS} days`, '/query/end_date');
  return { start, end };
}

export async function organizationUsage(ds: DataSource, organizationId: string, period: { start: Date; end: Date }) {
  const rows: Array<Record<keyof UsageDay, string>> = await ds.query(
    `WITH days AS (
       SELECT generate_series($2::timestamptz, $3::timestamptz - interval '1 day', interval '1 day') AS day
     ), runs_by_day AS (
       SELECT date_trunc('day', coalesce(started_at, created_at), 'UTC') AS day,
              sum(CASE WHEN started_at IS NULL THEN 0
                       ELSE extract(epoch FROM coalesce(completed_at, now()) - started_at) END) AS runtime_seconds,
              sum(coalesce((usage->>'input_tokens')::numeric, 0)) AS input_tokens,
              sum(coalesce((usage->>'output_tokens')::numeric, 0)) AS output_tokens
       FROM runs
       WHERE organization_id = $1 AND coalesce(started_at, created_at) >= $2 AND coalesce(started_at, created_at) < $3
       GROUP BY 1
     ), ingested AS (
       SELECT date_trunc('day', created_at, 'UTC') AS day, sum(bytes_ingested) AS bytes_ingested
       FROM knowledge_base_jobs WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY 1
     ), queries AS (
       SELECT date_trunc('day', created_at, 'UTC') AS day, count(*) AS rag_queries FROM (
         SELECT created_at FROM knowledge_base_queries WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
         UNION ALL
         SELECT created_at FROM knowledge_base_searches WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
         UNION ALL
         SELECT created_at FROM retriever_queries WHERE organization_id = $1 AND created_at >= $2 AND created_at < $3
       ) q GROUP BY 1
     )
     SELECT to_char(days.day AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
            coalesce(r.runtime_seconds, 0) AS runtime_seconds, coalesce(r.input_tokens, 0) AS input_tokens,
            coalesce(r.output_tokens, 0) AS output_tokens, coalesce(i.bytes_ingested, 0) AS bytes_ingested,
            coalesce(q.rag_queries, 0) AS rag_queries
     FROM days
     LEFT JOIN runs_by_day r ON r.day = days.day
     LEFT JOIN ingested i ON i.day = days.day
     LEFT JOIN queries q ON q.day = days.day
     ORDER BY days.day`,
    [organizationId, period.start.toISOString(), period.end.toISOString()],
  );
  const days: UsageDay[] = rows.map((r) => ({
    date: r.date,
    runtime_seconds: Math.round(Number(r.runtime_seconds) * 1000) / 1000,
    input_tokens: Number(r.input_tokens),
    output_tokens: Number(r.output_tokens),
    bytes_ingested: Number(r.bytes_ingested),
    rag_queries: Number(r.rag_queries),
  }));
  const total = (k: Exclude<keyof UsageDay, 'date'>) => days.reduce((sum, d) => sum + d[k], 0);
  return {
    organization_id: organizationId,
    usage_period_start: period.start.toISOString(),
    usage_period_end: period.end.toISOString(),
    runtime_seconds: Math.round(total('runtime_seconds') * 1000) / 1000,
    runtime_seconds_limit: NO_LIMIT,
    input_tokens: total('input_tokens'),
    output_tokens: total('output_tokens'),
    bytes_ingested: total('bytes_ingested'),
    bytes_ingested_limit: NO_LIMIT,
    rag_queries: total('rag_queries'),
    rag_queries_limit: NO_LIMIT,
    days,
  };
}

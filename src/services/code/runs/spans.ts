// Spans of structure runs: what griptape's observability driver (GriptapeCloudObservabilityDriver) exports,
// a JSON list per batch. Stored as posted, per run and organization, listed in the order of their start.
// A run keeps a bounded amount: past MAX_SPANS_PER_RUN spans or MAX_SPAN_BYTES_PER_RUN bytes a batch is
// refused whole (413), so an exporter in a loop cannot fill the database.
import type { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { badRequest, HttpError, notFound } from '../../../errors';
import { PageRequest, paginate, Pagination, skipTake } from '../../../persistence/pagination';
import { assertRunAccess } from './code-runs';

export const MAX_SPANS_PER_REQUEST = 1000;
const DATETIME_OUT_OF_RANGE = '22008';
const INVALID_DATETIME = '22007';
export const MAX_SPANS_PER_RUN = 10_000;
export const MAX_SPAN_BYTES_PER_RUN = 16 * 1024 * 1024;

/** A span as the driver posts it (validated by the route's schema; defaults filled in). */
export interface SpanInput {
  trace_id: string;
  span_id: string;
  parent_id?: string | null;
  name: string;
  start_time: string;
  end_time: string | null;
  status: 'UNSET' | 'OK' | 'ERROR';
  attributes: Record<string, unknown>;
  events: Array<{ name: string; timestamp: string | null; attributes: Record<string, unknown> }>;
}

/** The run, locked against concurrent batches (the bounds are checked and written in one transaction). */
const LOCK_RUN = `SELECT run_id FROM runs WHERE run_id = $1 AND organization_id = $2 AND kind = 'structure' FOR UPDATE`;

/** Stores a batch; answers how many the run now has. Spans are accepted whatever the run's status: exporters flush late. */
export async function createSpans(ds: DataSource, caller: Caller, runId: string, spans: SpanInput[]): Promise<number> {
  assertRunAccess(caller, runId);
  const rows = spans.map((span, i) => {
    const text = JSON.stringify(span);
    // PostgreSQL's jsonb refuses NUL characters.
    if (text.includes('\\u0000')) throw badRequest('Spans must not contain NUL characters', `/body/${i}`);
    return { text, bytes: Buffer.byteLength(text) };
  });
  return ds.transaction(async (em) => {
    if (!(await em.query(LOCK_RUN, [runId, caller.organizationId])).length) throw notFound('Structure run');
    const [{ count, bytes }] = await em.query(
      `SELECT count(*)::int AS count, coalesce(sum(bytes), 0)::bigint AS bytes FROM run_spans WHERE run_id = $1`,
      [runId],
    );
    const total = count + rows.length;
    const totalBytes = Number(bytes) + rows.reduce((n, r) => n + r.bytes, 0);
    if (total > MAX_SPANS_PER_RUN || totalBytes > MAX_SPAN_BYTES_PER_RUN) {
      throw new HttpError(413, 'PayloadTooLargeError', [
        {
          message: `A run keeps at most ${MAX_SPANS_PER_RUN} spans and ${MAX_SPAN_BYTES_PER_RUN} bytes of them; this batch would make ${total} spans, ${totalBytes} bytes`,
        },
      ]);
    }
    if (rows.length) {
      await em
        .query(
          `INSERT INTO run_spans (run_id, organization_id, start_time, span, bytes)
           SELECT $1, $2, (s->>'start_time')::timestamptz, s, b
             FROM unnest($3::jsonb[], $4::int[]) AS u(s, b)`,
          [runId, caller.organizationId, rows.map((r) => r.text), rows.map((r) => r.bytes)],
        )
        .catch((err: { code?: string }) => {
          // A date-time the schema takes but PostgreSQL cannot hold (year 0, past 294276): the caller's to fix.
          if (err.code === DATETIME_OUT_OF_RANGE || err.code === INVALID_DATETIME)
            throw badRequest('A span start_time is outside the dates PostgreSQL keeps (4713 BC to 294276 AD)');
          throw err;
        });
    }
    return total;
  });
}

/** A page of the run's spans by start time (ties in the order they arrived). */
export async function listSpans(
  ds: DataSource,
  caller: Caller,
  runId: string,
  page: PageRequest,
): Promise<{ items: unknown[]; pagination: Pagination }> {
  assertRunAccess(caller, runId);
  const found = await ds.query(`SELECT 1 FROM runs WHERE run_id = $1 AND organization_id = $2 AND kind = 'structure'`, [
    runId,
    caller.organizationId,
  ]);
  if (!found.length) throw notFound('Structure run');
  const { skip, take } = skipTake(page);
  const [rows, [{ total }]] = await Promise.all([
    ds.query(`SELECT span FROM run_spans WHERE run_id = $1 ORDER BY start_time, id OFFSET $2 LIMIT $3`, [
      runId,
      skip,
      take,
    ]),
    ds.query(`SELECT count(*)::int AS total FROM run_spans WHERE run_id = $1`, [runId]),
  ]);
  return { items: rows.map((r: { span: unknown }) => r.span), pagination: paginate(page, total) };
}

// A run's feed: its events and log lines, each appended in order with a per-run sequence taken from the run
// row (serializing the writers of one run), and the NOTIFY on commit by which every api process learns that
// something of the run changed (SSE fan-out goes through PostgreSQL, not memory). Written by the runs' wing
// (src/services/code/runs/state.ts re-exports these) and by the job kernel (a lost run's last event).
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { RunEvent } from './entities/run';

/**
 * NOTIFY channel; payload `<run id> <epoch seconds of the writer's transaction start>[ <organization id>]`
 * (parseRunPayload). Sent on every event, log batch and status change of a run; the organization is there only
 * on a status change or a new run (the organization's stream of run changes, src/api/sse/run-changes.ts, wakes
 * on those alone). The time (the NOTIFY lag metric) is the transaction's, so the notifications of one run in
 * one transaction are still folded into one by PostgreSQL.
 */
export const RUN_CHANNEL = 'run_updates';

/**
 * The run id, the sending transaction's start (epoch ms, if present) and, for a status change, the run's
 * organization of a `run_updates` payload.
 */
export function parseRunPayload(payload: string): { runId: string; sentAtMs?: number; organizationId?: string } {
  const [runId, at, organizationId] = payload.split(' ');
  const seconds = Number(at);
  return {
    runId,
    ...(at && Number.isFinite(seconds) ? { sentAtMs: seconds * 1000 } : {}),
    ...(organizationId ? { organizationId } : {}),
  };
}

/** The notification of a run as an SQL expression (see RUN_CHANNEL); `orgIdSql` on a status change. */
export const notifyOf = (runIdSql: string, channelParam: string, orgIdSql?: string) =>
  `pg_notify(${channelParam}, ${runIdSql}::text || ' ' || extract(epoch FROM now())::text` +
  `${orgIdSql ? ` || ' ' || ${orgIdSql}::text` : ''}) AS notified`;

export interface NewEvent {
  type: string;
  origin: 'SYSTEM' | 'USER' | 'ASSISTANT';
  payload: unknown;
  /** Epoch seconds (float); defaults to now. */
  timestamp?: number;
}

/**
 * Appends events to a run in order; they become visible (and are notified) when the transaction commits.
 * One statement: the run's sequence is advanced, the events inserted and the notification sent.
 */
export async function appendEvents(em: EntityManager, runId: string, events: NewEvent[]): Promise<RunEvent[]> {
  if (!events.length) return [];
  const now = new Date();
  const ids = events.map(() => randomUUID());
  const timestamps = events.map((e) => e.timestamp ?? now.getTime() / 1000);
  const counter: Array<{ event_seq: string; organization_id: string }> = await em.query(
    `WITH counter AS (
       UPDATE runs SET event_seq = event_seq + $2 WHERE run_id = $1 RETURNING event_seq, organization_id
     ), inserted AS (
       INSERT INTO run_events (event_id, run_id, seq, organization_id, type, origin, payload, timestamp, created_at)
       SELECT e.id, $1, counter.event_seq - $2 + e.ord, counter.organization_id, e.type, e.origin, e.payload, e.ts, $8
         FROM counter, unnest($3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::float8[])
              WITH ORDINALITY AS e(id, type, origin, payload, ts, ord)
     )
     SELECT counter.event_seq, counter.organization_id, ${notifyOf('$1', '$9')} FROM counter`,
    [
      runId,
      events.length,
      ids,
      events.map((e) => e.type),
      events.map((e) => e.origin),
      events.map((e) => (e.payload === undefined || e.payload === null ? null : JSON.stringify(e.payload))),
      timestamps,
      now,
      RUN_CHANNEL,
    ],
  );
  if (!counter.length) throw new Error(`run ${runId} does not exist`);
  const last = Number(counter[0].event_seq);
  return events.map((e, i) => ({
    event_id: ids[i],
    run_id: runId,
    seq: last - events.length + 1 + i,
    organization_id: counter[0].organization_id,
    type: e.type,
    origin: e.origin,
    payload: e.payload ?? null,
    timestamp: timestamps[i],
    created_at: now,
  }));
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
}

/** Appends log lines to a run in order (one statement: sequence, lines and notification; atomic by itself). */
export async function appendLogs(em: DataSource | EntityManager, runId: string, lines: LogLine[]): Promise<void> {
  if (!lines.length) return;
  const counter: unknown[] = await em.query(
    `WITH counter AS (
       UPDATE runs SET log_seq = log_seq + $2 WHERE run_id = $1 RETURNING log_seq
     ), inserted AS (
       INSERT INTO run_logs (run_id, seq, stream, line)
       SELECT $1, counter.log_seq - $2 + ord, s, l
         FROM counter, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(s, l, ord)
     )
     SELECT ${notifyOf('$1', '$5')} FROM counter`,
    [runId, lines.length, lines.map((l) => l.stream), lines.map((l) => l.line), RUN_CHANNEL],
  );
  if (!counter.length) throw new Error(`run ${runId} does not exist`);
}

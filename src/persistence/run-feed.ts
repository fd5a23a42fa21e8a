// A run's feed: its events and log lines, each appended in order with a per-run sequence taken from the run
// row (serializing the writers of one run), and the NOTIFY on commit by which every api process learns that
// something of the run changed (SSE fan-out goes through PostgreSQL, not memory). Written by the runs' wing
// (src/services/code/runs/state.ts re-exports these) and by the job kernel (a lost run's last event).
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { queryPrepared } from './direct-sql';
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
 * One statement's parts that append `events` to the feed of the run row a data-modifying CTE named `moved`
 * returns: `set` advances the row's event sequence (in that CTE's UPDATE), `insert` (a CTE of its own)
 * inserts the events after it. Parameters from $`first` on (`values`). `rows(moved)`: the events as inserted,
 * from the moved row's `event_seq` and `organization_id`.
 */
export function feedAppend(events: NewEvent[], first: number) {
  const now = new Date();
  const ids = events.map(() => randomUUID());
  const timestamps = events.map((e) => e.timestamp ?? now.getTime() / 1000);
  const $ = (i: number) => `$${first + i}`;
  return {
    set: `event_seq = event_seq + ${$(0)}`,
    insert: `INSERT INTO run_events (event_id, run_id, seq, organization_id, type, origin, payload, timestamp, created_at)
       SELECT e.id, moved.run_id, moved.event_seq - ${$(0)} + e.ord, moved.organization_id, e.type, e.origin,
              e.payload, e.ts, ${$(6)}
         FROM moved, unnest(${$(1)}::uuid[], ${$(2)}::text[], ${$(3)}::text[], ${$(4)}::jsonb[], ${$(5)}::float8[])
              WITH ORDINALITY AS e(id, type, origin, payload, ts, ord)`,
    values: [
      events.length,
      ids,
      events.map((e) => e.type),
      events.map((e) => e.origin),
      events.map((e) => (e.payload === undefined || e.payload === null ? null : JSON.stringify(e.payload))),
      timestamps,
      now,
    ],
    rows: (moved: { run_id: string; event_seq: string | number; organization_id: string }): RunEvent[] => {
      const last = Number(moved.event_seq);
      return events.map((e, i) => ({
        event_id: ids[i],
        run_id: moved.run_id,
        seq: last - events.length + 1 + i,
        organization_id: moved.organization_id,
        type: e.type,
        origin: e.origin,
        payload: e.payload ?? null,
        timestamp: timestamps[i],
        created_at: now,
      }));
    },
  };
}

/**
 * Appends events to a run in order; they become visible (and are notified) when the transaction commits.
 * One statement: the run's sequence is advanced, the events inserted and the notification sent.
 */
export async function appendEvents(em: EntityManager, runId: string, events: NewEvent[]): Promise<RunEvent[]> {
  if (!events.length) return [];
  const feed = feedAppend(events, 2);
  const channel = `$${2 + feed.values.length}`;
  const [moved]: Array<{ run_id: string; event_seq: string; organization_id: string }> = await queryPrepared(
    em,
    `WITH moved AS (
       UPDATE runs SET ${feed.set} WHERE run_id = $1 RETURNING run_id, event_seq, organization_id
     ), inserted AS (${feed.insert})
     SELECT moved.run_id, moved.event_seq, moved.organization_id, ${notifyOf('$1', channel)} FROM moved`,
    [runId, ...feed.values, RUN_CHANNEL],
  );
  if (!moved) throw new Error(`run ${runId} does not exist`);
  return feed.rows(moved);
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
}

/** Appends log lines to a run in order (one statement: sequence, lines and notification; atomic by itself). */
export async function appendLogs(em: DataSource | EntityManager, runId: string, lines: LogLine[]): Promise<void> {
  if (!lines.length) return;
  const counter: unknown[] = await queryPrepared(
    em,
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

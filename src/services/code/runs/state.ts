// The only writers of run and deployment state. Every status change is a guarded UPDATE that only moves
// forward and never leaves a terminal state, so a retried activity is harmless. Events and logs get a
// per-run sequence from the run row (serializing writers of one run) and a NOTIFY on commit, which is
// how every api process learns about them (SSE fan-out goes through PostgreSQL, not memory).
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { DeploymentStatus } from '../../../persistence/entities/deployment';
import { Run, RunEvent, RunStatus } from '../../../persistence/entities/run';
import { recordRun, recordStatus } from '../../../observability/metrics';
import { hydrateRow } from '../../../persistence/direct-sql';

/**
 * NOTIFY channel; payload `<run id> <epoch seconds of the writer's transaction start>` (runIdOfPayload). Sent on
 * every event, log batch and status change of a run. The time (the NOTIFY lag metric) is the transaction's, so
 * the notifications of one run in one transaction are still folded into one by PostgreSQL.
 */
export const RUN_CHANNEL = 'run_updates';

/** The run id and the sending transaction's start (epoch ms, if present) of a `run_updates` payload. */
export function parseRunPayload(payload: string): { runId: string; sentAtMs?: number } {
  const [runId, at] = payload.split(' ');
  const seconds = Number(at);
  return at && Number.isFinite(seconds) ? { runId, sentAtMs: seconds * 1000 } : { runId };
}

const RUN_FROM: Record<RunStatus, RunStatus[]> = {
  QUEUED: [],
  STARTING: ['QUEUED'],
  RUNNING: ['QUEUED', 'STARTING'],
  SUCCEEDED: ['QUEUED', 'STARTING', 'RUNNING'],
  FAILED: ['QUEUED', 'STARTING', 'RUNNING'],
  ERROR: ['QUEUED', 'STARTING', 'RUNNING'],
  CANCELLED: ['QUEUED', 'STARTING', 'RUNNING'],
};

export type RunChanges = Partial<
  Pick<Run, 'status_detail' | 'started_at' | 'completed_at' | 'output' | 'output_timestamp' | 'deployment_id'>
>;

/** JSON columns are passed as text so pg does not turn arrays into PostgreSQL arrays. */
const JSON_COLUMNS = new Set(['status_detail', 'output', 'code_source']);

/**
 * The guarded transition: `UPDATE <table> SET status = to, ... WHERE id AND status IN (from)`. It only
 * moves forward and never leaves a terminal state; answers the moved row (`RETURNING *`), or undefined. With
 * `notify`, the same statement sends the run's notification when the row moved (one round trip, not three).
 */
async function guardedTransition(
  em: EntityManager,
  target: { table: 'runs' | 'deployments'; idColumn: string; id: string },
  to: string,
  from: string[],
  changes: Record<string, unknown>,
  notify = false,
): Promise<Record<string, unknown> | undefined> {
  const sets = ['status = $2', 'updated_at = now()'];
  const values: unknown[] = [target.id, to, from];
  for (const [column, value] of Object.entries(changes)) {
    values.push(JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);
    sets.push(`${column} = $${values.length}`);
  }
  const update = `UPDATE ${target.table} SET ${sets.join(', ')} WHERE ${target.idColumn} = $1 AND status = ANY($3::text[]) RETURNING *`;
  if (!notify) {
    const [rows] = await em.query(update, values);
    return rows[0];
  }
  values.push(RUN_CHANNEL);
  const rows: Array<Record<string, unknown>> = await em.query(
    `WITH moved AS (${update}) SELECT moved.*, ${notifyOf('moved.run_id', `$${values.length}`)} FROM moved`,
    values,
  );
  return rows[0];
}

/** The notification of a run as an SQL expression (see RUN_CHANNEL). */
const notifyOf = (runIdSql: string, channelParam: string) =>
  `pg_notify(${channelParam}, ${runIdSql}::text || ' ' || extract(epoch FROM now())::text) AS notified`;

/** Moves a run to `to` if that is forward from its current status; returns the updated row, or undefined. */
export async function transitionRun(
  em: EntityManager,
  runId: string,
  to: RunStatus,
  changes: RunChanges = {},
): Promise<Run | undefined> {
  const row = await guardedTransition(
    em,
    { table: 'runs', idColumn: 'run_id', id: runId },
    to,
    RUN_FROM[to],
    changes,
    true,
  );
  if (!row) return undefined;
  const run = hydrateRow(em.connection, Run, row);
  recordRun(run, changes.started_at !== undefined);
  return run;
}

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
export async function appendLogs(em: EntityManager, runId: string, lines: LogLine[]): Promise<void> {
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

const DEPLOYMENT_FROM: Record<DeploymentStatus, DeploymentStatus[]> = {
  QUEUED: [],
  DEPLOYING: ['QUEUED'],
  SUCCEEDED: ['QUEUED', 'DEPLOYING'],
  FAILED: ['QUEUED', 'DEPLOYING'],
  ERROR: ['QUEUED', 'DEPLOYING'],
};

/** Guarded, forward-only deployment transition; true when it moved. */
export async function transitionDeployment(
  em: EntityManager,
  deploymentId: string,
  to: DeploymentStatus,
  changes: { status_detail?: unknown; build_path?: string; code_source?: unknown; completed_at?: Date } = {},
): Promise<boolean> {
  const target = { table: 'deployments', idColumn: 'deployment_id', id: deploymentId } as const;
  const moved = (await guardedTransition(em, target, to, DEPLOYMENT_FROM[to], changes)) !== undefined;
  if (moved) recordStatus('deployment', to);
  return moved;
}

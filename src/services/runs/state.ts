// The only writers of run and deployment state. Every status change is a guarded UPDATE that only moves
// forward and never leaves a terminal state, so a retried activity is harmless. Events and logs get a
// per-run sequence from the run row (serializing writers of one run) and a NOTIFY on commit, which is
// how every api process learns about them (SSE fan-out goes through PostgreSQL, not memory).
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { DeploymentStatus } from '../../persistence/entities/deployment';
import { Run, RunEvent, RunStatus } from '../../persistence/entities/run';
import { recordRun, recordStatus } from '../../observability/metrics';

/**
 * NOTIFY channel; payload `<run id> <epoch seconds of the writer's transaction start>` (runIdOfPayload). Sent on
 * every event, log batch and status change of a run. The time (the NOTIFY lag metric) is the transaction's, so
 * the notifications of one run in one transaction are still folded into one by PostgreSQL.
 */
export const RUN_CHANNEL = 'run_updates';
const NOTIFY_RUN = `SELECT pg_notify($1, $2 || ' ' || extract(epoch FROM now())::text)`;

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
 * moves forward and never leaves a terminal state; true when the row moved.
 */
async function guardedTransition(
  em: EntityManager,
  target: { table: 'runs' | 'deployments'; idColumn: string; id: string },
  to: string,
  from: string[],
  changes: Record<string, unknown>,
): Promise<boolean> {
  const sets = ['status = $2', 'updated_at = now()'];
  const values: unknown[] = [target.id, to, from];
  for (const [column, value] of Object.entries(changes)) {
    values.push(JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);
    sets.push(`${column} = $${values.length}`);
  }
  const [rows] = await em.query(
    `UPDATE ${target.table} SET ${sets.join(', ')} WHERE ${target.idColumn} = $1 AND status = ANY($3::text[]) RETURNING 1`,
    values,
  );
  return rows.length > 0;
}

/** Moves a run to `to` if that is forward from its current status; returns the updated row, or undefined. */
export async function transitionRun(
  em: EntityManager,
  runId: string,
  to: RunStatus,
  changes: RunChanges = {},
): Promise<Run | undefined> {
  if (!(await guardedTransition(em, { table: 'runs', idColumn: 'run_id', id: runId }, to, RUN_FROM[to], changes)))
    return undefined;
  await em.query(NOTIFY_RUN, [RUN_CHANNEL, runId]);
  const run = await em.getRepository(Run).findOneByOrFail({ run_id: runId });
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

/** Appends events to a run in order; they become visible (and are notified) when the transaction commits. */
export async function appendEvents(em: EntityManager, runId: string, events: NewEvent[]): Promise<RunEvent[]> {
  if (!events.length) return [];
  const [counter] = await em.query(
    `UPDATE runs SET event_seq = event_seq + $2 WHERE run_id = $1 RETURNING event_seq, organization_id`,
    [runId, events.length],
  );
  if (!counter?.length) throw new Error(`run ${runId} does not exist`);
  const last = Number(counter[0].event_seq);
  const now = new Date();
  const rows: RunEvent[] = events.map((e, i) => ({
    event_id: randomUUID(),
    run_id: runId,
    seq: last - events.length + 1 + i,
    organization_id: counter[0].organization_id,
    type: e.type,
    origin: e.origin,
    payload: e.payload ?? null,
    timestamp: e.timestamp ?? now.getTime() / 1000,
    created_at: now,
  }));
  await em.getRepository(RunEvent).insert(rows as QueryDeepPartialEntity<RunEvent>[]);
  await em.query(NOTIFY_RUN, [RUN_CHANNEL, runId]);
  return rows;
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
}

/** Appends log lines to a run in order. */
export async function appendLogs(em: EntityManager, runId: string, lines: LogLine[]): Promise<void> {
  if (!lines.length) return;
  const [counter] = await em.query(`UPDATE runs SET log_seq = log_seq + $2 WHERE run_id = $1 RETURNING log_seq`, [
    runId,
    lines.length,
  ]);
  if (!counter?.length) throw new Error(`run ${runId} does not exist`);
  const first = Number(counter[0].log_seq) - lines.length + 1;
  await em.query(
    `INSERT INTO run_logs (run_id, seq, stream, line)
     SELECT $1, $2::bigint + ord - 1, s, l FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(s, l, ord)`,
    [runId, first, lines.map((l) => l.stream), lines.map((l) => l.line)],
  );
  await em.query(NOTIFY_RUN, [RUN_CHANNEL, runId]);
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
  const moved = await guardedTransition(em, target, to, DEPLOYMENT_FROM[to], changes);
  if (moved) recordStatus('deployment', to);
  return moved;
}

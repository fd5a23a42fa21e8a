// The only writer of knowledge base job and data job statuses: a guarded UPDATE that only moves forward and never leaves a
// terminal state (QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED), so a retried activity is harmless.
import type { DataSource, EntityManager } from 'typeorm';
import { recordStatus } from '../../observability/metrics';
import type { JobError, KnowledgeBaseJobStatus } from '../../persistence/entities/knowledge-base';

export const OPEN_JOB_STATUSES: KnowledgeBaseJobStatus[] = ['QUEUED', 'RUNNING'];
export const isTerminalJob = (s: KnowledgeBaseJobStatus) => !OPEN_JOB_STATUSES.includes(s);

const FROM: Record<KnowledgeBaseJobStatus, KnowledgeBaseJobStatus[]> = {
  QUEUED: [],
  RUNNING: ['QUEUED'],
  SUCCEEDED: ['QUEUED', 'RUNNING'],
  FAILED: ['QUEUED', 'RUNNING'],
  CANCELLED: ['QUEUED', 'RUNNING'],
};

export interface JobChanges {
  status_detail?: Record<string, unknown>;
  errors?: JobError[];
  bytes_ingested?: number;
}

/** The table of a kind of ingestion job: knowledge base jobs and data jobs share their status rules. */
export interface JobTable {
  table: 'knowledge_base_jobs' | 'data_jobs';
  idColumn: 'knowledge_base_job_id' | 'data_job_id';
  /** The resource kind of the job's workflow, for the jobs-ended metric. */
  kind: 'knowledge-base-job' | 'data-job';
}

const KNOWLEDGE_BASE_JOBS: JobTable = {
  table: 'knowledge_base_jobs',
  idColumn: 'knowledge_base_job_id',
  kind: 'knowledge-base-job',
};

/**
 * Moves job `jobId` of `target` to `to` when that is forward from its status; true when it moved. Terminal
 * moves set completed_at.
 */
export async function transitionJobRow(
  db: DataSource | EntityManager,
  target: JobTable,
  jobId: string,
  to: KnowledgeBaseJobStatus,
  changes: JobChanges = {},
): Promise<boolean> {
  const rows: unknown[] = await db
    .query(
      `UPDATE ${target.table} SET status = $2, updated_at = now(),
         status_detail = COALESCE($4::jsonb, status_detail),
         errors = COALESCE($5::jsonb, errors),
         bytes_ingested = COALESCE($6::bigint, bytes_ingested),
         completed_at = CASE WHEN $7 THEN now() ELSE completed_at END
       WHERE ${target.idColumn} = $1 AND status = ANY($3::text[]) RETURNING 1`,
      [
        jobId,
        to,
        FROM[to],
        changes.status_detail === undefined ? null : JSON.stringify(changes.status_detail),
        changes.errors === undefined ? null : JSON.stringify(changes.errors),
        changes.bytes_ingested ?? null,
        isTerminalJob(to),
      ],
    )
    .then((r: [unknown[], number]) => r[0]);
  if (rows.length) recordStatus(target.kind, to);
  return rows.length > 0;
}

/** Moves knowledge base job `jobId` to `to` (transitionJobRow). */
export const transitionJob = (
  db: DataSource | EntityManager,
  jobId: string,
  to: KnowledgeBaseJobStatus,
  changes: JobChanges = {},
) => transitionJobRow(db, KNOWLEDGE_BASE_JOBS, jobId, to, changes);

// The only writer of knowledge base job statuses: a guarded UPDATE that only moves forward and never leaves a
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

/** Moves job `jobId` to `to` when that is forward from its status; true when it moved. Terminal moves set completed_at. */
export async function transitionJob(
  db: DataSource | EntityManager,
  jobId: string,
  to: KnowledgeBaseJobStatus,
  changes: JobChanges = {},
): Promise<boolean> {
  const rows: unknown[] = await db
    .query(
      `UPDATE knowledge_base_jobs SET status = $2, updated_at = now(),
         status_detail = COALESCE($4::jsonb, status_detail),
         errors = COALESCE($5::jsonb, errors),
         bytes_ingested = COALESCE($6::bigint, bytes_ingested),
         completed_at = CASE WHEN $7 THEN now() ELSE completed_at END
       WHERE knowledge_base_job_id = $1 AND status = ANY($3::text[]) RETURNING 1`,
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
  if (rows.length) recordStatus('knowledge-base-job', to);
  return rows.length > 0;
}

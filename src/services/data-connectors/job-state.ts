// The only writer of data job statuses: a guarded UPDATE that only moves forward and never leaves a terminal
// state (QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED), so a retried activity is harmless. Same rules
// as knowledge base jobs (src/services/knowledge-bases/job-state.ts).
import type { DataSource, EntityManager } from 'typeorm';
import type { DataJobStatus } from '../../persistence/entities/data-connector';
import type { JobChanges } from '../knowledge-bases/job-state';
import { isTerminalJob, OPEN_JOB_STATUSES } from '../knowledge-bases/job-state';

export { isTerminalJob, OPEN_JOB_STATUSES };

const FROM: Record<DataJobStatus, DataJobStatus[]> = {
  QUEUED: [],
  RUNNING: ['QUEUED'],
  SUCCEEDED: ['QUEUED', 'RUNNING'],
  FAILED: ['QUEUED', 'RUNNING'],
  CANCELLED: ['QUEUED', 'RUNNING'],
};

/** Moves job `jobId` to `to` when that is forward from its status; true when it moved. Terminal moves set completed_at. */
export async function transitionDataJob(
  db: DataSource | EntityManager,
  jobId: string,
  to: DataJobStatus,
  changes: JobChanges = {},
): Promise<boolean> {
  const rows: unknown[] = await db
    .query(
      `UPDATE data_jobs SET status = $2, updated_at = now(),
         status_detail = COALESCE($4::jsonb, status_detail),
         errors = COALESCE($5::jsonb, errors),
         bytes_ingested = COALESCE($6::bigint, bytes_ingested),
         completed_at = CASE WHEN $7 THEN now() ELSE completed_at END
       WHERE data_job_id = $1 AND status = ANY($3::text[]) RETURNING 1`,
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
  return rows.length > 0;
}

/** Progress of a RUNNING job (bytes so far); no status change. */
export async function recordProgress(db: DataSource, jobId: string, bytes: number): Promise<void> {
  await db.query(
    `UPDATE data_jobs SET bytes_ingested = $2, updated_at = now() WHERE data_job_id = $1 AND status = 'RUNNING'`,
    [jobId, bytes],
  );
}

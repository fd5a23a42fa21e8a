// The progress of a running data job (its statuses move only through the job kernel: src/jobs).
import type { DataSource } from 'typeorm';

/** Progress of a RUNNING job (bytes so far); no status change. */
export async function recordProgress(db: DataSource, jobId: string, bytes: number): Promise<void> {
  await db.query(
    `UPDATE data_jobs SET bytes_ingested = $2, updated_at = now() WHERE data_job_id = $1 AND status = 'RUNNING'`,
    [jobId, bytes],
  );
}

// Data job statuses: the job kernel's guarded transition (src/jobs) on `data_jobs` (the statuses of knowledge
// base jobs), and the progress of a running job.
import type { DataSource, EntityManager } from 'typeorm';
import { DATA_JOB } from '../../jobs/kinds';
import { transition } from '../../jobs/transition';
import type { DataJobStatus } from '../../persistence/entities/data-connector';
import type { JobChanges } from '../knowledge/job-state';
import { isTerminalJob, OPEN_JOB_STATUSES } from '../knowledge/job-state';

export { isTerminalJob, OPEN_JOB_STATUSES };

/** Moves data job `jobId` to `to` when that is forward from its status; true when it moved. */
export const transitionDataJob = async (
  db: DataSource | EntityManager,
  jobId: string,
  to: DataJobStatus,
  changes: JobChanges = {},
) => (await transition(db, DATA_JOB, jobId, to, { ...changes })) !== undefined;

/** Progress of a RUNNING job (bytes so far); no status change. */
export async function recordProgress(db: DataSource, jobId: string, bytes: number): Promise<void> {
  await db.query(
    `UPDATE data_jobs SET bytes_ingested = $2, updated_at = now() WHERE data_job_id = $1 AND status = 'RUNNING'`,
    [jobId, bytes],
  );
}

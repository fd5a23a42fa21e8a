// The only writer of data job statuses: the guarded, forward-only UPDATE of knowledge base jobs
// (src/services/knowledge/job-state.ts transitionJobRow) on `data_jobs`.
import type { DataSource, EntityManager } from 'typeorm';
import type { DataJobStatus } from '../../persistence/entities/data-connector';
import type { JobChanges, JobTable } from '../knowledge/job-state';
import { isTerminalJob, OPEN_JOB_STATUSES, transitionJobRow } from '../knowledge/job-state';

export { isTerminalJob, OPEN_JOB_STATUSES };

const DATA_JOBS: JobTable = { table: 'data_jobs', idColumn: 'data_job_id', kind: 'data-job' };

/** Moves data job `jobId` to `to` when that is forward from its status (transitionJobRow); true when it moved. */
export const transitionDataJob = (
  db: DataSource | EntityManager,
  jobId: string,
  to: DataJobStatus,
  changes: JobChanges = {},
) => transitionJobRow(db, DATA_JOBS, jobId, to, changes);

/** Progress of a RUNNING job (bytes so far); no status change. */
export async function recordProgress(db: DataSource, jobId: string, bytes: number): Promise<void> {
  await db.query(
    `UPDATE data_jobs SET bytes_ingested = $2, updated_at = now() WHERE data_job_id = $1 AND status = 'RUNNING'`,
    [jobId, bytes],
  );
}

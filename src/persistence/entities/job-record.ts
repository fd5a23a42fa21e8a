// What the job records of the ingestion kinds share (knowledge base jobs, data jobs; deliveries have the same
// statuses): their statuses (QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED, the kernel's JOB_OPEN and
// JOB_TERMINAL in src/jobs/kinds.ts) and the per-item errors of `errors[]`. Each kind's entity names them.
export type JobStatus = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

/** One item's failure in a job's `errors[]` (an asset, a page, an object). */
export interface JobError {
  type: string;
  message: string;
  path?: string;
}

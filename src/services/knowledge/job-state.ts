// Knowledge base job statuses (QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED), written through the job
// kernel's guarded transition (src/jobs), so a retried activity is harmless.
import type { DataSource, EntityManager } from 'typeorm';
import { KNOWLEDGE_BASE_JOB } from '../../jobs/kinds';
import { transition } from '../../jobs/transition';
import type { JobError, KnowledgeBaseJobStatus } from '../../persistence/entities/knowledge-base';

export const OPEN_JOB_STATUSES = KNOWLEDGE_BASE_JOB.open as KnowledgeBaseJobStatus[];
export const isTerminalJob = (s: KnowledgeBaseJobStatus) => !OPEN_JOB_STATUSES.includes(s);

export interface JobChanges {
  status_detail?: Record<string, unknown>;
  errors?: JobError[];
  bytes_ingested?: number;
}

/** Moves knowledge base job `jobId` to `to` when that is forward from its status; true when it moved. */
export const transitionJob = async (
  db: DataSource | EntityManager,
  jobId: string,
  to: KnowledgeBaseJobStatus,
  changes: JobChanges = {},
) => (await transition(db, KNOWLEDGE_BASE_JOB, jobId, to, { ...changes })) !== undefined;

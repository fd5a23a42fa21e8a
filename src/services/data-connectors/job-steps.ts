// The worker's side of a data job (workflows/data-job.ts) around its ingest (./ingest.ts): the knowledge base jobs
// a successful job chains, and what a schedule does when due (workflows/scheduled-job.ts). Its terminal write is
// the kernel's finishJob (src/jobs/finish.ts).
import type { DataSource } from 'typeorm';
import { HttpError } from '../../errors';
import { DataConnector, DataJob, DataJobStatus } from '../../persistence/entities/data-connector';
import type { ScheduledJobInput, ScheduledJobOutcome } from '../../temporal/contracts';
import { createJob } from '../knowledge/jobs';
import { chainKnowledgeBaseJobs } from './chain';
import { startDataJob, type DataJobDeps } from './jobs';
import type { DataJobEnding } from '../../temporal/contracts';
import type { Caller } from '../caller';

export type { DataJobEnding };

const SCHEDULE_ACTOR = 'schedule';

/** Knowledge base jobs of the knowledge bases covering the job's connector prefix (none when it is gone). */
export async function chainJobsOf(deps: DataJobDeps, jobId: string): Promise<string[]> {
  const { ds } = deps;
  const job = await ds.getRepository(DataJob).findOneBy({ data_job_id: jobId });
  const connector =
    job && (await ds.getRepository(DataConnector).findOneBy({ data_connector_id: job.data_connector_id }));
  if (!connector) return [];
  return chainKnowledgeBaseJobs(deps, connector, jobId);
}

/** What a schedule does when due: a job of its data connector or knowledge base, unless one is open. */
export async function startScheduledJob(deps: DataJobDeps, input: ScheduledJobInput): Promise<ScheduledJobOutcome> {
  const caller: Caller = {
    organizationId: input.organizationId,
    userId: null,
    apiKeyId: SCHEDULE_ACTOR,
    actor: SCHEDULE_ACTOR,
    runId: null,
    // The platform acting for what the organization set up: a member starts runs and jobs.
    role: 'member',
  };
  if (input.target === 'data-connector') {
    const connector = await deps.ds
      .getRepository(DataConnector)
      .findOneBy({ data_connector_id: input.id, organization_id: input.organizationId });
    if (!connector) return { skipped: 'The data connector no longer exists' };
    const job = await startDataJob(deps, caller, connector, { ifOpen: 'skip' });
    return job ? { jobId: job.data_job_id } : { skipped: 'A job of this data connector is still open' };
  }
  try {
    return { jobId: (await createJob(deps, caller, input.id)).knowledge_base_job_id };
  } catch (err) {
    if (err instanceof HttpError && [404, 409].includes(err.status)) return { skipped: err.message };
    throw err;
  }
}

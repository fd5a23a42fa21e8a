// The data job workflow (id `data-job-<uuid>`): an execution slot of its organization (execution-slot.ts: the
// fair share every kind of work takes; until it has one the job waits QUEUED, holding no worker slot), RUNNING,
// one heartbeating ingest activity (list, read, transform and store the connector's items; the structure runs
// it starts execute in its slot), the knowledge base jobs of the chain when it succeeded, then the terminal
// write (which records their ids) and the slot given back. In the job frame (`jobToEnding`): a `cancel` signal
// or a workflow cancellation aborts the ingest (or the wait for a slot) and ends CANCELLED; the time limit
// (DATA_JOB_TIME_LIMIT_SECONDS, from RUNNING on) ends it FAILED; a failed activity ends it FAILED with its type.
//
// The start, the chain and the terminal write are local activities (DATA_JOB_LOCAL_WRITES_PATCH): a job is two
// workflow tasks and one activity task, not five and four, which is most of a small job's time. Jobs started
// before that replay with them as activity tasks, and jobs started before DATA_JOB_SLOT_PATCH without a slot.
import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DataJobInput, DataJobStatus } from '../src/temporal/contracts';
import { ExecutionSlot, withSlot } from './execution-slot';
import { jobToEnding, LOCAL_STATUS_WRITES, longActivity, STATUS_WRITES } from './run-scope';

export const DATA_JOB_LOCAL_WRITES_PATCH = 'data-job-local-writes';
export const DATA_JOB_SLOT_PATCH = 'data-job-slot';

export async function dataJobWorkflow(input: DataJobInput): Promise<DataJobStatus | 'MISSING'> {
  const { startDataJob, finishDataJob, chainKnowledgeBaseJobs } = patched(DATA_JOB_LOCAL_WRITES_PATCH)
    ? proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES)
    : proxyActivities<Activities>(STATUS_WRITES);
  const { ingestDataJob } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );
  const slot = patched(DATA_JOB_SLOT_PATCH) ? new ExecutionSlot({ kind: 'data_job', jobId: input.jobId }) : undefined;
  return withSlot(
    slot,
    (ending: Parameters<typeof finishDataJob>[0]['ending']) => finishDataJob({ jobId: input.jobId, ending }),
    (finish) =>
      jobToEnding(
        { timeLimitSeconds: input.timeLimitSeconds, subject: 'Job', failedReason: 'IngestFailed' },
        async (startTimer) => {
          if (slot && !(await slot.acquire())) return undefined;
          if (!(await startDataJob({ jobId: input.jobId }))) return undefined;
          startTimer();
          const ending = await ingestDataJob({ jobId: input.jobId });
          if (ending.status !== 'SUCCEEDED') return ending;
          return { ...ending, knowledgeBaseJobIds: await chainKnowledgeBaseJobs({ jobId: input.jobId }) };
        },
        finish,
      ),
  );
}

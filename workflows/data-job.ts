// The data job workflow (id `data-job-<uuid>`): RUNNING, one heartbeating ingest activity (list, read,
// transform and store the connector's items), the knowledge base jobs of the chain when it succeeded, then the
// terminal write (which records their ids). In the job frame (`jobToEnding`): a `cancel` signal or a workflow
// cancellation aborts the ingest and ends CANCELLED; the time limit (DATA_JOB_TIME_LIMIT_SECONDS) ends it
// FAILED; a failed activity ends it FAILED with its type.
//
// The start, the chain and the terminal write are local activities (DATA_JOB_LOCAL_WRITES_PATCH): a job is two
// workflow tasks and one activity task, not five and four, which is most of a small job's time. Jobs started
// before that replay with them as activity tasks.
import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DataJobInput, DataJobStatus } from '../src/temporal/contracts';
import { jobToEnding, LOCAL_STATUS_WRITES, longActivity, STATUS_WRITES } from './run-scope';

export const DATA_JOB_LOCAL_WRITES_PATCH = 'data-job-local-writes';

export async function dataJobWorkflow(input: DataJobInput): Promise<DataJobStatus | 'MISSING'> {
  const { startDataJob, finishDataJob, chainKnowledgeBaseJobs } = patched(DATA_JOB_LOCAL_WRITES_PATCH)
    ? proxyLocalActivities<Activities>(LOCAL_STATUS_WRITES)
    : proxyActivities<Activities>(STATUS_WRITES);
  const { ingestDataJob } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );
  return jobToEnding(
    { timeLimitSeconds: input.timeLimitSeconds, subject: 'Job', failedReason: 'IngestFailed' },
    async (startTimer) => {
      if (!(await startDataJob({ jobId: input.jobId }))) return undefined;
      startTimer();
      const ending = await ingestDataJob({ jobId: input.jobId });
      if (ending.status !== 'SUCCEEDED') return ending;
      return { ...ending, knowledgeBaseJobIds: await chainKnowledgeBaseJobs({ jobId: input.jobId }) };
    },
    (ending) => finishDataJob({ jobId: input.jobId, ending }),
  );
}

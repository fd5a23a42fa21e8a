// The data job workflow (id `data-job-<uuid>`): RUNNING, one heartbeating ingest activity (list, read,
// transform and store the connector's items), the knowledge base jobs of the chain when it succeeded, then the
// terminal write (which records their ids). In the job frame (`jobToEnding`): a `cancel` signal or a workflow
// cancellation aborts the ingest and ends CANCELLED; the time limit (DATA_JOB_TIME_LIMIT_SECONDS) ends it
// FAILED; a failed activity ends it FAILED with its type.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DataJobInput, DataJobStatus } from '../src/temporal/contracts';
import { jobToEnding, longActivity, STATUS_WRITES } from './run-scope';

const { startDataJob, finishDataJob, chainKnowledgeBaseJobs } = proxyActivities<Activities>(STATUS_WRITES);

export async function dataJobWorkflow(input: DataJobInput): Promise<DataJobStatus | 'MISSING'> {
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

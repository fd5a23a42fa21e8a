// The data job workflow (id `data-job-<uuid>`): RUNNING, one heartbeating ingest activity (list, read,
// transform and store the connector's items), the knowledge base jobs of the chain when it succeeded, then the
// terminal write (which records their ids). In the run frame (`withinLimit`): a `cancel` signal or a workflow cancellation aborts
// the ingest and ends CANCELLED; the time limit (DATA_JOB_TIME_LIMIT_SECONDS) ends it FAILED; a failed
// activity ends it FAILED with its type.
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DataJobEnding, DataJobInput, DataJobStatus } from '../src/temporal/contracts';
import { longActivity, STATUS_WRITES, withinLimit } from './run-scope';

const { startDataJob, finishDataJob, chainKnowledgeBaseJobs } = proxyActivities<Activities>(STATUS_WRITES);

export async function dataJobWorkflow(input: DataJobInput): Promise<DataJobStatus | 'MISSING'> {
  const { ingestDataJob } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );
  return withinLimit<DataJobEnding, DataJobStatus | 'MISSING'>(
    {
      timeLimitSeconds: input.timeLimitSeconds,
      cancelSignal: true,
      endings: {
        timedOut: () => ({
          status: 'FAILED',
          reason: 'TimeLimitExceeded',
          message: `Job exceeded its time limit of ${input.timeLimitSeconds} s`,
        }),
        cancelled: (requestedBy) => ({ status: 'CANCELLED', requestedBy }),
        failed: (err) => {
          const cause = err instanceof ActivityFailure ? err.cause : err;
          return {
            status: 'FAILED',
            reason: cause instanceof ApplicationFailure && cause.type ? cause.type : 'IngestFailed',
            message: (cause as Error)?.message ?? String(err),
          };
        },
      },
    },
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

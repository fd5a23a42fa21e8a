// The knowledge base job workflow (id `knowledge-base-job-<uuid>`): RUNNING, one heartbeating ingest
// activity (extract, chunk, embed, store every covered asset), the terminal write. In the run frame
// (`withinLimit`): a `cancel` signal or a workflow cancellation aborts the ingest and ends CANCELLED; the time
// limit (KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS) ends it FAILED; a failed activity ends it FAILED with its type.
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { JobEnding, KnowledgeBaseJobInput, KnowledgeBaseJobStatus } from '../src/temporal/contracts';
import { longActivity, STATUS_WRITES, withinLimit } from './run-scope';

const { startKnowledgeBaseJob, finishKnowledgeBaseJob } = proxyActivities<Activities>(STATUS_WRITES);

export async function knowledgeBaseJobWorkflow(
  input: KnowledgeBaseJobInput,
): Promise<KnowledgeBaseJobStatus | 'MISSING'> {
  const { ingestKnowledgeBase } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );
  return withinLimit<JobEnding, KnowledgeBaseJobStatus | 'MISSING'>(
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
      if (!(await startKnowledgeBaseJob({ jobId: input.jobId }))) return undefined;
      startTimer();
      return ingestKnowledgeBase({ jobId: input.jobId });
    },
    (ending) => finishKnowledgeBaseJob({ jobId: input.jobId, ending }),
  );
}

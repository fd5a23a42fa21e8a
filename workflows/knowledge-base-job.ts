// The knowledge base job workflow (id `knowledge-base-job-<uuid>`): RUNNING, one heartbeating ingest
// activity (extract, chunk, embed, store every covered asset), the terminal write. In the job frame
// (`jobToEnding`): a `cancel` signal or a workflow cancellation aborts the ingest and ends CANCELLED; the time
// limit (KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS) ends it FAILED; a failed activity ends it FAILED with its type.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { KnowledgeBaseJobInput, KnowledgeBaseJobStatus } from '../src/temporal/contracts';
import { jobToEnding, longActivity, STATUS_WRITES } from './run-scope';

const { startKnowledgeBaseJob, finishKnowledgeBaseJob } = proxyActivities<Activities>(STATUS_WRITES);

export async function knowledgeBaseJobWorkflow(
  input: KnowledgeBaseJobInput,
): Promise<KnowledgeBaseJobStatus | 'MISSING'> {
  const { ingestKnowledgeBase } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );
  return jobToEnding(
    { timeLimitSeconds: input.timeLimitSeconds, subject: 'Job', failedReason: 'IngestFailed' },
    async (startTimer) => {
      if (!(await startKnowledgeBaseJob({ jobId: input.jobId }))) return undefined;
      startTimer();
      return ingestKnowledgeBase({ jobId: input.jobId });
    },
    (ending) => finishKnowledgeBaseJob({ jobId: input.jobId, ending }),
  );
}

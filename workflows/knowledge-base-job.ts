// The knowledge base job workflow (id `knowledge-base-job-<uuid>`): an execution slot of its organization
// (execution-slot.ts: the fair share every kind of work takes; until it has one the job waits QUEUED, holding
// no worker slot), RUNNING, one heartbeating ingest activity (extract, chunk, embed, store every covered asset),
// the terminal write, the slot given back. In the job frame (`jobToEnding`): a `cancel` signal or a workflow
// cancellation aborts the ingest (or the wait for a slot) and ends CANCELLED; the time limit
// (KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS, from RUNNING on) ends it FAILED; a failed activity ends it FAILED with
// its type. Jobs started before KNOWLEDGE_BASE_JOB_SLOT_PATCH replay without a slot.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { KnowledgeBaseJobInput, KnowledgeBaseJobStatus } from '../src/temporal/contracts';
import { ExecutionSlot, withSlot } from './execution-slot';
import { jobToEnding, longActivity, STATUS_WRITES } from './run-scope';

export const KNOWLEDGE_BASE_JOB_SLOT_PATCH = 'knowledge-base-job-slot';

const { startKnowledgeBaseJob, finishKnowledgeBaseJob } = proxyActivities<Activities>(STATUS_WRITES);

export async function knowledgeBaseJobWorkflow(
  input: KnowledgeBaseJobInput,
): Promise<KnowledgeBaseJobStatus | 'MISSING'> {
  const { ingestKnowledgeBase } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 3 }),
  );
  const frame = { timeLimitSeconds: input.timeLimitSeconds, subject: 'Job', failedReason: 'IngestFailed' };
  const slot = patched(KNOWLEDGE_BASE_JOB_SLOT_PATCH)
    ? new ExecutionSlot({ kind: 'knowledge_base_job', jobId: input.jobId })
    : undefined;
  return withSlot(
    slot,
    (ending: Parameters<typeof finishKnowledgeBaseJob>[0]['ending']) =>
      finishKnowledgeBaseJob({ jobId: input.jobId, ending }),
    (finish) =>
      jobToEnding(
        frame,
        async (startTimer) => {
          if (slot && !(await slot.acquire())) return undefined;
          if (!(await startKnowledgeBaseJob({ jobId: input.jobId }))) return undefined;
          startTimer();
          return ingestKnowledgeBase({ jobId: input.jobId });
        },
        finish,
      ),
  );
}

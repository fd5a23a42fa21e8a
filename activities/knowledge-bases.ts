// Activities of knowledge base jobs and queries: adapters over src/services/knowledge/ (ingest-job.ts: the
// job's ingest and terminal write, its start being the kernel's; run-query.ts: a query). The ingest activity heartbeats between assets
// and embedding batches (a cancel reaches it within about a second and aborts the provider request); model
// refusals and an outside database that fails become failures that are not retried.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import type { ActivityDeps } from './deps';
import { ModelError } from '../src/drivers/model/types';
import type { KnowledgeBase, KnowledgeBaseJobStatus } from '../src/persistence/entities/knowledge-base';
import { ingestKnowledgeBaseJob } from '../src/services/knowledge/ingest-job';
import { finishJob } from '../src/jobs/finish';
import { runKnowledgeBaseQuery } from '../src/services/knowledge/retrieval/run-query';
import { openChunkStore, OutsideDatabaseError, type ChunkStore } from '../src/services/knowledge/index/chunk-store';
import { KNOWLEDGE_BASE_JOB } from '../src/jobs/kinds';
import { startJob } from '../src/jobs/start';
import type { KnowledgeBaseJobEnding, KnowledgeBaseQueryInput } from '../src/temporal/contracts';
import { MODEL_FAILURE_TYPE } from './model-call';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import { withHeartbeats } from './heartbeat';

/** A ModelError as the failure the workflow records (not retried: the same request would fail the same way). */
export function modelFailure(err: ModelError) {
  return ApplicationFailure.create({
    message: err.message,
    type: MODEL_FAILURE_TYPE[err.kind],
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
  });
}

/**
 * An outside database that cannot be reached or lacks pgvector (or a knowledge base deleted since a retriever
 * named it), as the failure the workflow records: the user's to fix, not retried.
 */
export function outsideFailure(err: { message: string; type: string }) {
  return ApplicationFailure.create({
    message: err.message,
    type: err.type,
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN, // the user's database, not ours: no worker warning
  });
}

export function createKnowledgeBaseActivities(deps: ActivityDeps) {
  const { ds, models, log, box } = deps;
  const stores = { ds, box, outbound: outboundPolicyFor(deps.config) };
  /** The chunk store of `kb` (ours, or a pg_vector knowledge base's outside table). */
  const storeOf = async (kb: KnowledgeBase): Promise<ChunkStore> => {
    try {
      return await openChunkStore(stores, kb);
    } catch (err) {
      if (err instanceof OutsideDatabaseError) throw outsideFailure(err);
      throw err;
    }
  };
  return {
    /** QUEUED → RUNNING; false when the job already ended, or its row never became visible (nothing to do). */
    async startKnowledgeBaseJob(input: { jobId: string }): Promise<boolean> {
      return (await startJob(ds, KNOWLEDGE_BASE_JOB, input.jobId)) === 'RUNNING';
    },

    /** Ingests every covered asset; per-asset failures become `errors[]`. Heartbeats throughout. */
    async ingestKnowledgeBase(input: { jobId: string }): Promise<KnowledgeBaseJobEnding> {
      const ctx = Context.current();
      try {
        return await withHeartbeats((beat, signal) =>
          ingestKnowledgeBaseJob(deps, input.jobId, { signal, beat, openStore: storeOf }),
        );
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw err;
        if (err instanceof ModelError) throw modelFailure(err);
        log.warn({ err, jobId: input.jobId }, 'knowledge base job failed');
        throw err;
      }
    },

    /** The terminal write (guarded: a job that already ended keeps its end); answers the job's status. */
    async finishKnowledgeBaseJob(input: {
      jobId: string;
      ending: KnowledgeBaseJobEnding;
    }): Promise<KnowledgeBaseJobStatus | 'MISSING'> {
      return (await finishJob(ds, KNOWLEDGE_BASE_JOB, input.jobId, input.ending)) as KnowledgeBaseJobStatus | 'MISSING';
    },

    /** Embeds the query (when the knowledge base has a model), ranks the chunks and persists the query. */
    async runKnowledgeBaseQuery(input: KnowledgeBaseQueryInput): Promise<'DONE' | 'MISSING'> {
      try {
        return await runKnowledgeBaseQuery(stores, models, input);
      } catch (err) {
        if (err instanceof ModelError) throw modelFailure(err);
        if (err instanceof OutsideDatabaseError) throw outsideFailure(err);
        throw err;
      }
    },
  };
}

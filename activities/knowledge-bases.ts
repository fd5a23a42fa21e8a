// Activities of knowledge base jobs and queries. The job's ingest activity heartbeats between assets and
// embedding batches (a cancel reaches it within about a second and aborts the provider request); status
// writes go through the guarded transition of src/services/knowledge/job-state.ts.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import type { ActivityDeps } from './deps';
import { ModelError } from '../src/drivers/model/types';
import {
  JobError,
  KnowledgeBase,
  KnowledgeBaseJob,
  KnowledgeBaseJobStatus,
} from '../src/persistence/entities/knowledge-base';
import { transitionJob } from '../src/services/knowledge/job-state';
import { ROW_VISIBLE_WAIT_MS } from '../src/services/code/runs/lifecycle';
import { waitFor } from '../src/temporal/workflow-records';
import {
  coveredAssets,
  ingestAsset,
  recordDimensions,
  removeUncovered,
  type Embed,
} from '../src/services/knowledge/ingest';
import { saveQuery } from '../src/services/knowledge/query';
import { retrieve } from '../src/services/knowledge/retrieve';
import { openChunkStore, OutsideDatabaseError, type ChunkStore } from '../src/services/knowledge/chunk-store';
import { dropVectorIndex, ensureVectorIndex } from '../src/services/knowledge/vector-index';
import { applyTransforms } from '../src/services/data-connectors/transforms';
import type { KnowledgeBaseQueryInput } from '../src/temporal/contracts';
import { MODEL_FAILURE_TYPE } from './model-call';
import { outboundPolicyFor } from '../src/security/outbound-policy';

export interface JobEnding {
  status: Exclude<KnowledgeBaseJobStatus, 'QUEUED' | 'RUNNING'>;
  reason?: string;
  message?: string;
  requestedBy?: string;
  errors?: JobError[];
  bytesIngested?: number;
  stats?: Record<string, number>;
}

/** A ModelError as the failure the workflow records (not retried: the same request would fail the same way). */
export function modelFailure(err: ModelError) {
  return ApplicationFailure.create({
    message: err.message,
    type: MODEL_FAILURE_TYPE[err.kind],
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN,
  });
}

/** An outside database that cannot be reached or lacks pgvector, as the failure the workflow records. */
export function outsideFailure(err: OutsideDatabaseError) {
  return ApplicationFailure.create({
    message: err.message,
    type: err.type,
    nonRetryable: true,
    category: ApplicationFailureCategory.BENIGN, // the user's database, not ours: no worker warning
  });
}

export function createKnowledgeBaseActivities(deps: ActivityDeps) {
  const { ds, blobs, models, log, box } = deps;
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
      // Locked and read first, waiting for a row committed just after the workflow started (as runs and
      // deployments do): the api starts the workflow inside the transaction that inserts the row.
      const status = await waitFor(
        () =>
          ds.transaction(async (em) => {
            const [row]: Array<{ status: KnowledgeBaseJobStatus }> = await em.query(
              `SELECT status FROM knowledge_base_jobs WHERE knowledge_base_job_id = $1 FOR UPDATE`,
              [input.jobId],
            );
            if (row?.status !== 'QUEUED') return row?.status;
            await transitionJob(em, input.jobId, 'RUNNING');
            return 'RUNNING';
          }),
        (s) => s !== undefined,
        ROW_VISIBLE_WAIT_MS,
      );
      return status === 'RUNNING';
    },

    /** Ingests every covered asset; per-asset failures become `errors[]`. Heartbeats throughout. */
    async ingestKnowledgeBase(input: { jobId: string }): Promise<JobEnding> {
      const ctx = Context.current();
      const beat = () => ctx.heartbeat();
      const heartbeats = setInterval(beat, Math.max(200, Math.min(1_000, (ctx.info.heartbeatTimeoutMs ?? 15_000) / 4)));
      const stopIfCancelled = () => {
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new CancelledFailure('cancelled');
      };
      let store: ChunkStore | undefined;
      try {
        const job = await ds.getRepository(KnowledgeBaseJob).findOneBy({ knowledge_base_job_id: input.jobId });
        const kb =
          job && (await ds.getRepository(KnowledgeBase).findOneBy({ knowledge_base_id: job.knowledge_base_id }));
        if (!kb) return { status: 'FAILED', reason: 'KnowledgeBaseDeleted', message: 'The knowledge base was deleted' };
        const { assets, errors } = await coveredAssets(ds, kb);
        store = await storeOf(kb);
        // A changed model forgot the dimension; ours dropped the index then, an outside table's is dropped now.
        if (store.outside && kb.embedding_dimensions === null) await dropVectorIndex(store, kb.knowledge_base_id);
        let dimensions = kb.embedding_dimensions;
        const model = kb.embedding_model;
        const embed: Embed | undefined = model
          ? async (texts) => {
              stopIfCancelled();
              // A signal per request: the provider client leaves a listener on the signal it is given, and a
              // job makes many requests (MaxListenersExceededWarning on the activity's own signal otherwise).
              const ac = new AbortController();
              const forward = () => ac.abort(ctx.cancellationSignal.reason);
              ctx.cancellationSignal.addEventListener('abort', forward, { once: true });
              const answer = await models
                .embed({ model, input: texts, signal: ac.signal })
                .finally(() => ctx.cancellationSignal.removeEventListener('abort', forward));
              const got = answer.vectors[0].length;
              dimensions ??= await recordDimensions(ds, kb.knowledge_base_id, got);
              if (got !== dimensions) {
                throw Object.assign(
                  new Error(`The model answered ${got} dimensions; this knowledge base has ${dimensions}`),
                  { type: 'DimensionMismatch' },
                );
              }
              beat();
              return answer.vectors;
            }
          : undefined;
        const stats = { assets: assets.length, chunks: 0, embedded: 0, unchanged: 0, removed: 0 };
        let bytes = 0;
        for (const asset of assets) {
          stopIfCancelled();
          beat();
          try {
            const transform = kb.transforms?.length
              ? (text: string) =>
                  applyTransforms(
                    deps,
                    kb.transforms,
                    { name: asset.path, text },
                    {
                      organizationId: kb.organization_id,
                      createdBy: job!.created_by,
                      jobId: input.jobId,
                      signal: ctx.cancellationSignal,
                      beat,
                    },
                  )
              : undefined;
            const outcome = await ingestAsset(
              store,
              blobs,
              kb,
              asset,
              embed && model ? { model, embed } : undefined,
              transform,
            );
            bytes += outcome.bytes;
            stats.chunks += outcome.chunks;
            stats.embedded += outcome.embedded;
            if (outcome.unchanged) stats.unchanged++;
          } catch (err) {
            stopIfCancelled();
            // A provider that refused the request (bad model, bad key) fails every asset the same way: stop.
            if (err instanceof ModelError && err.kind !== 'unreachable') throw modelFailure(err);
            const type =
              err instanceof ModelError ? 'EmbeddingFailed' : ((err as { type?: string }).type ?? 'IngestFailed');
            errors.push({ type, message: (err as Error).message, path: asset.path });
          }
        }
        stats.removed = await removeUncovered(
          store,
          kb.knowledge_base_id,
          assets.map((a) => a.path),
        );
        if (dimensions) await ensureVectorIndex(store, kb.knowledge_base_id, dimensions);
        const failedAll = assets.length > 0 && errors.length >= assets.length && stats.chunks === 0;
        return {
          status: failedAll ? 'FAILED' : 'SUCCEEDED',
          ...(failedAll ? { reason: 'NoAssetIngested', message: 'No asset could be ingested' } : {}),
          errors,
          bytesIngested: bytes,
          stats,
        };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          const reason = ctx.cancellationSignal.reason;
          if (reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN') {
            throw ApplicationFailure.retryable('The worker running this step shut down', 'WorkerShutdown');
          }
          throw reason ?? err;
        }
        if (err instanceof ModelError) throw modelFailure(err);
        log.warn({ err, jobId: input.jobId }, 'knowledge base job failed');
        throw err;
      } finally {
        clearInterval(heartbeats);
        await store?.close();
      }
    },

    /** The terminal write (guarded: a job that already ended keeps its end); answers the job's status. */
    async finishKnowledgeBaseJob(input: {
      jobId: string;
      ending: JobEnding;
    }): Promise<KnowledgeBaseJobStatus | 'MISSING'> {
      const { ending } = input;
      await transitionJob(ds, input.jobId, ending.status, {
        status_detail: {
          ...(ending.reason ? { reason: ending.reason } : {}),
          ...(ending.message ? { message: ending.message } : {}),
          ...(ending.requestedBy ? { requested_by: ending.requestedBy } : {}),
          ...(ending.stats ? { stats: ending.stats } : {}),
        },
        ...(ending.errors ? { errors: ending.errors } : {}),
        ...(ending.bytesIngested !== undefined ? { bytes_ingested: ending.bytesIngested } : {}),
      });
      const job = await ds.getRepository(KnowledgeBaseJob).findOneBy({ knowledge_base_job_id: input.jobId });
      return job?.status ?? 'MISSING';
    },

    /** Embeds the query (when the knowledge base has a model), ranks the chunks and persists the query. */
    async runKnowledgeBaseQuery(input: KnowledgeBaseQueryInput): Promise<'DONE' | 'MISSING'> {
      const kb = await ds.getRepository(KnowledgeBase).findOneBy({
        knowledge_base_id: input.knowledgeBaseId,
        organization_id: input.organizationId,
      });
      if (!kb) return 'MISSING';
      let entries;
      try {
        entries = await retrieve(stores, models, kb, input.query, input.args);
      } catch (err) {
        if (err instanceof ModelError) throw modelFailure(err);
        if (err instanceof OutsideDatabaseError) throw outsideFailure(err);
        throw err;
      }
      await saveQuery(ds, {
        knowledge_base_query_id: input.queryId,
        knowledge_base_id: kb.knowledge_base_id,
        organization_id: kb.organization_id,
        query: input.query,
        query_args: { ...input.args },
        entries,
        created_by: input.createdBy,
        created_at: new Date(),
      });
      return 'DONE';
    },
  };
}

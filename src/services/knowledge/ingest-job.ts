// What a knowledge base job does (the activity in activities/knowledge-bases.ts calls this and heartbeats): the
// assets its knowledge base covers are ingested one by one (transformed, chunked, embedded when it has a model,
// by content hash, so unchanged assets are skipped), chunks of assets no longer covered are removed, and the
// vector index follows the embedding dimension. Per-asset failures become `errors[]`; a provider that refused
// the request (bad model, bad key) stops the job, as it would fail every asset the same way.
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../blobs/blob-store';
import type { Config } from '../../config';
import { ModelError, type ModelDriver } from '../../drivers/model/types';
import {
  JobError,
  KnowledgeBase,
  KnowledgeBaseJob,
  KnowledgeBaseJobStatus,
} from '../../persistence/entities/knowledge-base';
import { applyTransforms } from '../transforms/apply';
import type { ChunkStore } from './index/chunk-store';
import { coveredAssets, ingestAsset, recordDimensions, removeUncovered, type Embed } from './index/ingest';
import { dropVectorIndex, ensureVectorIndex } from './index/vector-index';
import type { KnowledgeBaseJobEnding } from '../../temporal/contracts';

export interface KnowledgeBaseJobDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
  blobs: BlobStore;
  models: ModelDriver;
}

/**
 * Runs job `jobId`: `signal` aborts it (cancel), `beat` heartbeats, `openStore` opens the knowledge base's
 * chunk store (the caller decides what an outside database that fails becomes). A refusing provider throws
 * its ModelError.
 */
export async function ingestKnowledgeBaseJob(
  deps: KnowledgeBaseJobDeps,
  jobId: string,
  ctl: { signal: AbortSignal; beat: () => void; openStore: (kb: KnowledgeBase) => Promise<ChunkStore> },
): Promise<KnowledgeBaseJobEnding> {
  const { ds, blobs, models } = deps;
  const stopIfCancelled = () => {
    if (ctl.signal.aborted) throw ctl.signal.reason ?? new Error('cancelled');
  };
  let store: ChunkStore | undefined;
  try {
    const job = await ds.getRepository(KnowledgeBaseJob).findOneBy({ knowledge_base_job_id: jobId });
    const kb = job && (await ds.getRepository(KnowledgeBase).findOneBy({ knowledge_base_id: job.knowledge_base_id }));
    if (!kb) return { status: 'FAILED', reason: 'KnowledgeBaseDeleted', message: 'The knowledge base was deleted' };
    const { assets, errors } = await coveredAssets(ds, kb);
    store = await ctl.openStore(kb);
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
          const forward = () => ac.abort(ctl.signal.reason);
          ctl.signal.addEventListener('abort', forward, { once: true });
          const answer = await models
            .embed({ model, input: texts, signal: ac.signal })
            .finally(() => ctl.signal.removeEventListener('abort', forward));
          const got = answer.vectors[0].length;
          dimensions ??= await recordDimensions(ds, kb.knowledge_base_id, got);
          if (got !== dimensions) {
            throw Object.assign(
              new Error(`The model answered ${got} dimensions; this knowledge base has ${dimensions}`),
              { type: 'DimensionMismatch' },
            );
          }
          ctl.beat();
          return answer.vectors;
        }
      : undefined;
    const stats = { assets: assets.length, chunks: 0, embedded: 0, unchanged: 0, removed: 0 };
    let bytes = 0;
    for (const asset of assets) {
      stopIfCancelled();
      ctl.beat();
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
                  jobId,
                  signal: ctl.signal,
                  beat: ctl.beat,
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
          { limits: deps.config.documentExtraction, signal: ctl.signal },
        );
        bytes += outcome.bytes;
        stats.chunks += outcome.chunks;
        stats.embedded += outcome.embedded;
        if (outcome.unchanged) stats.unchanged++;
      } catch (err) {
        stopIfCancelled();
        // A provider that refused the request (bad model, bad key) fails every asset the same way: stop.
        if (err instanceof ModelError && err.kind !== 'unreachable') throw err;
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
  } finally {
    await store?.close();
  }
}

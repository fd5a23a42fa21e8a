// What a knowledge base job does, asset by asset (the activity in activities/knowledge-bases.ts calls these
// and heartbeats between them). Guarantees: chunks are keyed by (knowledge base, asset path, chunk index)
// and remember the sha256 of their text and the model that embedded them, so a re-run embeds only chunks
// whose text (or the knowledge base's model) changed and leaves an unchanged asset untouched; an asset's
// chunks are replaced in one transaction; chunks of assets the knowledge base no longer covers are deleted.
// A failing asset becomes an entry of the job's `errors[]` and the others go on.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../../blobs/blob-store';
import { assetBlobKey } from '../../../blobs/keys';
import { likeEscape } from '../../../persistence/scoped';
import type { JobError, KnowledgeBase } from '../../../persistence/entities/knowledge-base';
import type { ChunkStore } from './chunk-store';
import { chunkDocument, chunkTextInSlices, CHUNK_TOKENS } from '../documents/chunking';
import { CHILD_CHUNK_TOKENS } from '../retrieval/parent-sections';
import { chunkingOf, parentChildOf } from '../settings';
import { formatOf } from '../documents/sections';
import { readsLargeFiles } from '../documents/extract';
import { extractIsolated, type ExtractionLimits } from '../documents/extract-isolated';
import { splitAssetPath } from '../knowledge-bases';
import { adjustTermStats, tokenCountSql } from './full-text';

/** Largest asset a job reads; larger ones are an error of that asset. */
export const MAX_INGEST_BYTES = 50 * 1024 * 1024;
/**
 * Largest spreadsheet a job reads: it is streamed, so its bytes do not become memory (the text cap and the
 * job's time limit bound what reading it costs); most other formats are read whole.
 */
export const MAX_STREAMED_INGEST_BYTES = 200 * 1024 * 1024;
/** Texts per embeddings request. */
export const EMBED_BATCH = 64;

export interface CoveredAsset {
  bucketId: string;
  name: string;
  /** `<bucket_id>/<name>`: the chunk's asset path and `meta.asset_path`. */
  path: string;
  /** The asset's own metadata (a data job's source URI, title, ...), copied into each chunk's meta. */
  meta?: Record<string, string> | null;
}

/** The uploaded assets the knowledge base's asset paths name; a path naming nothing is an error. */
export async function coveredAssets(
  ds: DataSource,
  kb: KnowledgeBase,
): Promise<{ assets: CoveredAsset[]; errors: JobError[] }> {
  const assets = new Map<string, CoveredAsset>();
  const errors: JobError[] = [];
  for (const assetPath of kb.asset_paths) {
    const { bucketId, name, prefix } = splitAssetPath(assetPath);
    const rows: Array<{ name: string; meta: Record<string, string> | null }> = await ds.query(
      `SELECT a.name, a.meta FROM assets a JOIN buckets b ON b.bucket_id = a.bucket_id
       WHERE a.bucket_id = $1 AND b.organization_id = $2 AND a.size IS NOT NULL
         AND ${prefix ? `a.name LIKE $3 ESCAPE '\\'` : 'a.name = $3'}
       ORDER BY a.name`,
      [bucketId, kb.organization_id, prefix ? `${likeEscape(name)}%` : name],
    );
    if (!rows.length) {
      errors.push({ type: 'NotFound', message: `No uploaded asset matches ${assetPath}`, path: assetPath });
    }
    for (const r of rows) {
      const path = `${bucketId}/${r.name}`;
      assets.set(path, { bucketId, name: r.name, path, meta: r.meta });
    }
  }
  return { assets: [...assets.values()], errors };
}

export type Embed = (texts: string[]) => Promise<number[][]>;

export interface AssetOutcome {
  bytes: number;
  chunks: number;
  embedded: number;
  unchanged: boolean;
  /** Dimension of the vectors written (undefined when nothing was embedded). */
  dimensions?: number;
}

/** The asset's bytes as a stream, once its size is known to be within its format's cap. */
async function openAsset(blobs: BlobStore, asset: CoveredAsset): Promise<{ stream: Readable; size: number }> {
  const blob = await blobs.get(assetBlobKey(asset.bucketId, asset.name));
  if (!blob) throw Object.assign(new Error(`The bytes of ${asset.path} are missing`), { type: 'NotFound' });
  const cap = readsLargeFiles(asset.name) ? MAX_STREAMED_INGEST_BYTES : MAX_INGEST_BYTES;
  if (blob.size > cap) {
    blob.stream.destroy();
    throw Object.assign(new Error(`${asset.path} is larger than ${cap} bytes`), { type: 'TooLarge' });
  }
  return blob;
}

/**
 * Extracts, chunks, embeds (when `embed`, with `model`) and stores one asset. Chunks whose text and model
 * are unchanged keep their vectors; nothing is written when the asset's chunks are all unchanged.
 */
export async function ingestAsset(
  store: ChunkStore,
  blobs: BlobStore,
  kb: KnowledgeBase,
  asset: CoveredAsset,
  embedding: { model: string; embed: Embed } | undefined,
  /** The knowledge base's transforms, applied to the extracted text before chunking. */
  transform: ((text: string) => Promise<string>) | undefined,
  /** The extraction's thread limits (EXTRACTION_*), and what stops a long one (the job's cancel or time limit). */
  extraction: { limits: ExtractionLimits; signal?: AbortSignal },
): Promise<AssetOutcome> {
  const blob = await openAsset(blobs, asset);
  const document = await extractIsolated(asset.name, blob.stream, extraction.limits, {
    organizationId: kb.organization_id,
    signal: extraction.signal,
  });
  const text = transform ? await transform(document.text) : document.text;
  const title = document.meta.title || asset.meta?.title || asset.name.replace(/^.*\//, '').replace(/\.[^.]+$/, '');
  const size = parentChildOf(kb) ? CHILD_CHUNK_TOKENS : CHUNK_TOKENS;
  const chunks =
    chunkingOf(kb) === 'length'
      ? await chunkTextInSlices(text, extraction.signal)
      : await chunkDocument(text, { title, format: formatOf(asset.name) }, extraction.signal, size);
  const existing: Array<{ chunk_index: number; content_hash: string; vector: string | null; model: string | null }> =
    await store.query(
      `SELECT chunk_index, content_hash, embedding::text AS vector, embedding_model AS model
       FROM ${store.table} WHERE knowledge_base_id = $1 AND asset_path = $2 ORDER BY chunk_index`,
      [kb.knowledge_base_id, asset.path],
    );
  const model = embedding?.model ?? null;
  const usable = (e: (typeof existing)[number]) => (model ? e.model === model && e.vector !== null : true);
  const unchanged =
    existing.length === chunks.length &&
    existing.every((e, i) => e.content_hash === chunks[i].hash && usable(e) && (model !== null || e.vector === null));
  if (unchanged) return { bytes: blob.size, chunks: chunks.length, embedded: 0, unchanged: true };

  const known = new Map<string, string>();
  for (const e of existing) if (model && usable(e)) known.set(e.content_hash, e.vector!);
  const vectors = new Map<string, string>(known);
  let dimensions: number | undefined;
  if (embedding) {
    const missing = [...new Map(chunks.filter((c) => !known.has(c.hash)).map((c) => [c.hash, c])).values()];
    for (let i = 0; i < missing.length; i += EMBED_BATCH) {
      const batch = missing.slice(i, i + EMBED_BATCH);
      const answer = await embedding.embed(batch.map((c) => c.content));
      batch.forEach((c, j) => vectors.set(c.hash, JSON.stringify(answer[j])));
      dimensions = answer[0]?.length;
    }
    if (dimensions === undefined && vectors.size) dimensions = JSON.parse(vectors.values().next().value!).length;
  }
  const ofAsset = 'c.asset_path = $2';
  await store.transaction(async (tx) => {
    await adjustTermStats(tx, kb.knowledge_base_id, -1, ofAsset, [asset.path]);
    await tx.execute(`DELETE FROM ${store.table} WHERE knowledge_base_id = $1 AND asset_path = $2`, [
      kb.knowledge_base_id,
      asset.path,
    ]);
    if (!chunks.length) return;
    await tx.execute(
      `INSERT INTO ${store.table}
         (knowledge_base_id, asset_path, chunk_index, chunk_id, content_hash, content, meta, embedding, embedding_model,
          tsv, tsv_length)
       SELECT $1, $2, t.i, t.id, t.h, t.c, t.m::jsonb, t.e::vector, $3, v.tsv, ${tokenCountSql('v.tsv')}
       FROM unnest($4::int[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[]) AS t(i, id, h, c, m, e)
       CROSS JOIN LATERAL (SELECT to_tsvector($10::regconfig, t.c) AS tsv) v`,
      [
        kb.knowledge_base_id,
        asset.path,
        model,
        chunks.map((c) => c.index),
        chunks.map(() => randomUUID()),
        chunks.map((c) => c.hash),
        chunks.map((c) => c.content),
        chunks.map((c) =>
          JSON.stringify({
            ...(asset.meta ?? {}),
            ...document.meta,
            asset_path: asset.path,
            bucket_id: asset.bucketId,
            asset_name: asset.name,
            chunk_index: String(c.index),
            ...(c.section !== undefined ? { section: String(c.section) } : {}),
          }),
        ),
        chunks.map((c) => vectors.get(c.hash) ?? null),
        kb.language,
      ],
    );
    await adjustTermStats(tx, kb.knowledge_base_id, 1, ofAsset, [asset.path]);
  });
  return {
    bytes: blob.size,
    chunks: chunks.length,
    embedded: chunks.filter((c) => !known.has(c.hash)).length * (embedding ? 1 : 0),
    unchanged: false,
    dimensions,
  };
}

/** Deletes the chunks of assets the knowledge base does not cover any more (and their full-text statistics). */
export async function removeUncovered(store: ChunkStore, knowledgeBaseId: string, covered: string[]): Promise<number> {
  return store.transaction(async (tx) => {
    await adjustTermStats(tx, knowledgeBaseId, -1, 'NOT (c.asset_path = ANY($2::text[]))', [covered]);
    return tx.execute(`DELETE FROM ${tx.table} WHERE knowledge_base_id = $1 AND NOT (asset_path = ANY($2::text[]))`, [
      knowledgeBaseId,
      covered,
    ]);
  });
}

/** Records the dimension of the knowledge base's model the first time; answers the recorded one. */
export async function recordDimensions(ds: DataSource, knowledgeBaseId: string, dimensions: number): Promise<number> {
  const [rows]: [Array<{ embedding_dimensions: number }>, number] = await ds.query(
    `UPDATE knowledge_bases SET embedding_dimensions = COALESCE(embedding_dimensions, $2)
     WHERE knowledge_base_id = $1 RETURNING embedding_dimensions`,
    [knowledgeBaseId, dimensions],
  );
  return rows[0]?.embedding_dimensions ?? dimensions;
}

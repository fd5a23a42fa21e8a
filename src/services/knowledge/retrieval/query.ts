// Querying a knowledge base. Retrieval: `hybrid` (gtc_hybrid_sql_pg_vector with an embedding model) fuses
// the cosine-similarity ranking of the vectors and the BM25 full-text ranking (full-text.ts), each a bounded
// candidate set, by reciprocal rank fusion, score = Σ 1 / (RRF_K + rank); `vector` (gtc_pg_vector with
// a model) ranks by cosine similarity (the score); `full_text` (no embedding model) by BM25. `filter`
// keeps chunks whose `meta` holds every given member (values compared as strings). The worker runs the query
// (it embeds the query text; the api never calls a model) and persists it; the api reads the row.
import type { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import type { PageRequest } from '../../../persistence/pagination';
import { KnowledgeBase, KnowledgeBaseQuery, QueryEntry } from '../../../persistence/entities/knowledge-base';
import { findInOrg, pageInOrg } from '../../../persistence/scoped';
import type { KnowledgeBaseQueryArgs } from '../../../temporal/contracts';
import type { ChunkStore } from '../index/chunk-store';
import { fullTextHits, type Hit } from '../index/full-text';
import { withSections } from './parent-sections';
import { parentChildOf } from '../settings';

/** The usual constant of reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009). */
export const RRF_K = 60;
export const MAX_QUERY_COUNT = 100;
export const DEFAULT_QUERY_COUNT = 10;

export type Retrieval = 'hybrid' | 'vector' | 'full_text';

export function retrievalOf(kb: Pick<KnowledgeBase, 'type' | 'embedding_model'>): Retrieval {
  if (!kb.embedding_model) return 'full_text';
  return kb.type === 'gtc_hybrid_sql_pg_vector' ? 'hybrid' : 'vector';
}

const filterOf = (args: KnowledgeBaseQueryArgs) =>
  JSON.stringify(Object.fromEntries(Object.entries(args.filter ?? {}).map(([k, v]) => [k, String(v)])));

/**
 * The `hnsw.ef_search` of a vector ranking that wants `limit` rows. An HNSW scan yields at most ef_search rows
 * (pgvector's default 40, fewer than the hybrid path's 50 candidates) and its recall grows with it: on the
 * bench's 100,000 chunks recall@10 was 0.72 at 40, 0.85 at 100, 0.92 at 200 and 0.97 at 400 (bench/RESULTS.md),
 * (bench/RESULTS.md has the cost beside a bare HNSW query).
 */
export const hnswEfSearch = (limit: number) => Math.min(1000, Math.max(HNSW_EF_SEARCH_MIN, limit * 2));
const HNSW_EF_SEARCH_MIN = 400;

export async function vectorHits(
  store: ChunkStore,
  kb: KnowledgeBase,
  vector: number[],
  filter: string,
  limit: number,
) {
  const dims = kb.embedding_dimensions;
  if (!dims || vector.length !== dims || !/^[0-9a-f-]{36}$/.test(kb.knowledge_base_id)) return [];
  return store.transaction(async (tx) => {
    await tx.query(`SET LOCAL hnsw.ef_search = ${hnswEfSearch(limit)}`);
    // The expression and the inlined predicate are those of the knowledge base's HNSW index (vector-index.ts).
    return (await tx.query(
      `SELECT chunk_id, 1 - (embedding::vector(${dims}) <=> $1::vector(${dims})) AS score
       FROM ${store.table}
       WHERE knowledge_base_id = '${kb.knowledge_base_id}' AND embedding IS NOT NULL AND embedding_model = $2
         AND meta @> $3::jsonb
       ORDER BY embedding::vector(${dims}) <=> $1::vector(${dims}) LIMIT $4`,
      [JSON.stringify(vector), kb.embedding_model, filter, limit],
    )) as Hit[];
  });
}

/** Reciprocal rank fusion of rankings (best first). */
export function fuse(rankings: Hit[][], count: number, k = RRF_K): Hit[] {
  const scores = new Map<string, number>();
  for (const ranking of rankings)
    ranking.forEach((h, i) => scores.set(h.chunk_id, (scores.get(h.chunk_id) ?? 0) + 1 / (k + i + 1)));
  return [...scores.entries()]
    .map(([chunk_id, score]) => ({ chunk_id, score }))
    .sort((a, b) => b.score - a.score || a.chunk_id.localeCompare(b.chunk_id))
    .slice(0, count);
}

/** The ranked entries of `query`; `vector` is the query's embedding (undefined without a model). */
export async function rankEntries(
  store: ChunkStore,
  kb: KnowledgeBase,
  query: string,
  args: KnowledgeBaseQueryArgs,
  vector: number[] | undefined,
): Promise<QueryEntry[]> {
  const filter = filterOf(args);
  const retrieval = retrievalOf(kb);
  // Parent-child: sections are answered, so more chunks are ranked (several may share a section).
  const parentChild = parentChildOf(kb);
  const count = parentChild ? Math.min(MAX_QUERY_COUNT * 4, args.count * 4) : args.count;
  const candidates = Math.min(1000, Math.max(50, count * 4));
  let hits: Hit[];
  if (retrieval === 'full_text' || !vector) {
    hits = await fullTextHits(store, kb, query, filter, count);
  } else if (retrieval === 'vector') {
    hits = (await vectorHits(store, kb, vector, filter, count)).map((h) => ({ ...h, score: Number(h.score) }));
    // No chunk has a vector of the model yet (a re-embed under way): full text answers meanwhile.
    if (!hits.length) hits = await fullTextHits(store, kb, query, filter, count);
  } else {
    const [byVector, byText] = await Promise.all([
      vectorHits(store, kb, vector, filter, candidates),
      fullTextHits(store, kb, query, filter, candidates),
    ]);
    hits = fuse([byVector, byText], count);
  }
  if (!hits.length) return [];
  const rows: Array<{
    chunk_id: string;
    asset_path: string;
    content: string;
    meta: Record<string, string>;
    vector: string | null;
  }> = await store.query(
    `SELECT chunk_id, asset_path, content, meta, ${args.include_vectors ? 'embedding::text' : 'NULL'} AS vector
       FROM ${store.table} WHERE knowledge_base_id = $1 AND chunk_id = ANY($2::uuid[])`,
    [kb.knowledge_base_id, hits.map((h) => h.chunk_id)],
  );
  const byId = new Map(rows.map((r) => [r.chunk_id, r]));
  let ranked = hits.flatMap((h) => (byId.has(h.chunk_id) ? [{ ...byId.get(h.chunk_id)!, score: h.score }] : []));
  if (parentChild) ranked = (await withSections(store, kb, ranked)).slice(0, args.count);
  return ranked.map((r) => {
    const artifact = {
      type: 'TextArtifact',
      id: r.chunk_id.replace(/-/g, ''),
      name: r.chunk_id,
      value: r.content,
      meta: {},
    };
    return {
      id: r.chunk_id,
      score: r.score,
      meta: { ...r.meta, content: r.content, artifact: JSON.stringify(artifact) },
      namespace: r.asset_path,
      ...(args.include_vectors && r.vector ? { vector: JSON.parse(r.vector) as number[] } : {}),
    };
  });
}

export async function saveQuery(ds: DataSource, row: KnowledgeBaseQuery): Promise<void> {
  // A retried activity finds its row written already.
  await ds
    .getRepository(KnowledgeBaseQuery)
    .createQueryBuilder()
    .insert()
    .values(row as never)
    .orIgnore()
    .execute();
}

export const findQuery = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, KnowledgeBaseQuery, caller.organizationId, { knowledge_base_query_id: id }, 'Knowledge base query');

export async function listQueries(ds: DataSource, caller: Caller, knowledgeBaseId: string, page: PageRequest) {
  await findInOrg(ds, KnowledgeBase, caller.organizationId, { knowledge_base_id: knowledgeBaseId }, 'Knowledge base');
  return pageInOrg(
    ds,
    KnowledgeBaseQuery,
    caller.organizationId,
    page,
    { knowledge_base_id: knowledgeBaseId },
    { created_at: 'DESC', knowledge_base_query_id: 'DESC' },
  );
}

// The rankings the retrieval benchmark scores, computed in this process by the worker's own code over the
// chunks one ingestion made (a `gtc_hybrid_sql_pg_vector` knowledge base): `full_text`, `vector` and `hybrid`
// are rankEntries as a knowledge base of that retrieval runs it (the same rows, the type or model changed in
// the record handed to it), so one ingestion serves every mode. Fusion variants (for choosing the fusion on
// the tuning corpus) fuse the same two halves, FUSION_CANDIDATES each, in other ways.
import type { Pool, PoolClient } from 'pg';
import type { KnowledgeBase } from '../../src/persistence/entities/knowledge-base';
import type { ChunkStore } from '../../src/services/knowledge/index/chunk-store';
import { fullTextHits, type Hit } from '../../src/services/knowledge/index/full-text';
import { fuse, rankEntries, vectorHits } from '../../src/services/knowledge/retrieval/query';

export type Mode = 'full_text' | 'vector' | 'hybrid';
export const MODES: Mode[] = ['full_text', 'vector', 'hybrid'];

/** A ChunkStore over a pg pool: the platform's own chunks table, as the worker's localChunkStore reads it. */
export function poolChunkStore(pool: Pool): ChunkStore {
  const over = (client: Pool | PoolClient): ChunkStore => ({
    table: 'knowledge_base_chunks',
    termsTable: 'knowledge_base_terms',
    outside: false,
    query: async (sql, params) => (await client.query(sql, params)).rows,
    execute: async (sql, params) => (await client.query(sql, params)).rowCount ?? 0,
    transaction: async (fn) => {
      const tx = await pool.connect();
      try {
        await tx.query('BEGIN');
        const result = await fn(over(tx));
        await tx.query('COMMIT');
        return result;
      } catch (err) {
        await tx.query('ROLLBACK');
        throw err;
      } finally {
        tx.release();
      }
    },
    close: async () => undefined,
  });
  return over(pool);
}

export async function knowledgeBaseRow(pool: Pool, id: string): Promise<KnowledgeBase> {
  const { rows } = await pool.query('SELECT * FROM knowledge_bases WHERE knowledge_base_id = $1', [id]);
  if (!rows[0]) throw new Error(`no knowledge base ${id}`);
  return rows[0] as KnowledgeBase;
}

/** The record rankEntries gets for `mode`: the type that ranks that way, no model for full text. */
export function asMode(kb: KnowledgeBase, mode: Mode): KnowledgeBase {
  if (mode === 'full_text') return { ...kb, embedding_model: null };
  return { ...kb, type: mode === 'vector' ? 'gtc_pg_vector' : 'gtc_hybrid_sql_pg_vector' };
}

/** Per chunk id, the document it came from (the asset's name without corpus folder and extension). */
export async function documentOfChunks(pool: Pool, kbId: string): Promise<Map<string, string>> {
  const { rows } = await pool.query(
    `SELECT chunk_id, meta->>'asset_name' AS name FROM knowledge_base_chunks WHERE knowledge_base_id = $1`,
    [kbId],
  );
  return new Map(rows.map((r: { chunk_id: string; name: string }) => [r.chunk_id, documentName(r.name)]));
}

/** `git/git-rebase.txt` → `git-rebase`. */
export const documentName = (assetName: string) => assetName.replace(/^[^/]*\//, '').replace(/\.[a-z]+$/, '');

/** Documents in the order of their best entry of the ranking rankEntries makes in `mode`. */
export async function rankDocuments(
  store: ChunkStore,
  kb: KnowledgeBase,
  mode: Mode,
  query: string,
  vector: number[],
  count: number,
): Promise<string[]> {
  const entries = await rankEntries(
    store,
    asMode(kb, mode),
    query,
    { count },
    mode === 'full_text' ? undefined : vector,
  );
  return [...new Set(entries.map((e) => documentName(e.meta.asset_name)))];
}

/** The two halves of a hybrid ranking, `limit` candidates each (chunk ids, best first). */
export async function halves(store: ChunkStore, kb: KnowledgeBase, query: string, vector: number[], limit: number) {
  const [byVector, byText] = await Promise.all([
    vectorHits(store, kb, vector, '{}', limit),
    fullTextHits(store, kb, query, '{}', limit),
  ]);
  return { byVector: byVector.map((h) => ({ ...h, score: Number(h.score) })), byText };
}

export interface Fusion {
  label: string;
  fuse(byVector: Hit[], byText: Hit[], count: number): Hit[];
}

/** Scores scaled to [0, 1] within their ranking (min-max); an empty or flat ranking scores 1 for all. */
function normalized(hits: Hit[]): Map<string, number> {
  const scores = hits.map((h) => h.score);
  const [lo, hi] = [Math.min(...scores), Math.max(...scores)];
  return new Map(hits.map((h) => [h.chunk_id, hi > lo ? (h.score - lo) / (hi - lo) : 1]));
}

export const rrf = (k: number): Fusion => ({
  label: `RRF k=${k}`,
  fuse: (byVector, byText, count) => fuse([byVector, byText], count, k),
});

/** weight × the vector half's normalized score + (1 − weight) × the full-text half's. */
export const weighted = (weight: number): Fusion => ({
  label: `normalized scores, vector weight ${weight}`,
  fuse: (byVector, byText, count) => {
    const v = normalized(byVector);
    const t = normalized(byText);
    const ids = new Set([...v.keys(), ...t.keys()]);
    return [...ids]
      .map((chunk_id) => ({ chunk_id, score: weight * (v.get(chunk_id) ?? 0) + (1 - weight) * (t.get(chunk_id) ?? 0) }))
      .sort((a, b) => b.score - a.score || a.chunk_id.localeCompare(b.chunk_id))
      .slice(0, count);
  },
});

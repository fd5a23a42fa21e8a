// The HNSW index of one knowledge base. The chunks' `embedding` column has no fixed dimension (knowledge
// bases embed with different models), and HNSW needs one: each knowledge base gets a partial expression
// index `(embedding::vector(<dim>)) vector_cosine_ops WHERE knowledge_base_id = '<id>'`, created once its
// dimension is known. Queries use the same expression and predicate (query.ts), so the planner can use it.
import type { DataSource, EntityManager } from 'typeorm';
import type { ChunkStore } from './chunk-store';

/** pgvector's HNSW limit for `vector`. */
export const MAX_INDEXED_DIMENSIONS = 2000;

export const vectorIndexName = (knowledgeBaseId: string) => `kb_chunks_hnsw_${knowledgeBaseId.replace(/-/g, '')}`;

/**
 * Creates the index when missing (idempotent), on the store's table (ours, or a pg_vector knowledge base's
 * table in its outside database). Dimensions beyond HNSW's limit are searched without an index.
 */
export async function ensureVectorIndex(store: ChunkStore, knowledgeBaseId: string, dimensions: number) {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_INDEXED_DIMENSIONS) return;
  // The id is a uuid read from our own row and the dimension an integer: both safe to inline (DDL takes no parameters).
  if (!/^[0-9a-f-]{36}$/.test(knowledgeBaseId)) throw new Error('not a uuid');
  await store.query(
    `CREATE INDEX IF NOT EXISTS ${vectorIndexName(knowledgeBaseId)} ON ${store.table}
     USING hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) WHERE knowledge_base_id = '${knowledgeBaseId}'`,
  );
}

export async function dropVectorIndex(db: DataSource | EntityManager | ChunkStore, knowledgeBaseId: string) {
  if (!/^[0-9a-f-]{36}$/.test(knowledgeBaseId)) throw new Error('not a uuid');
  await db.query(`DROP INDEX IF EXISTS ${vectorIndexName(knowledgeBaseId)}`);
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Knowledge bases, their jobs, their chunks and their persisted queries.
 *
 * Chunks carry a `tsvector` (generated from the text, GIN index) and an `embedding vector` without a fixed
 * dimension: HNSW needs one, and different knowledge bases embed with different models (1536 for
 * text-embedding-3-small, 768 for nomic-embed-text, ...). So the HNSW (cosine) index is a partial expression
 * index per knowledge base, `(embedding::vector(<dim>)) WHERE knowledge_base_id = <id>`, created by the first
 * job that learns the dimension (src/services/knowledge/index/vector-index.ts) and dropped with the knowledge
 * base; queries use the same expression and predicate, so the planner can use it.
 */
export class KnowledgeBases1764700000000 implements MigrationInterface {
  name = 'KnowledgeBases1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE knowledge_bases (
        knowledge_base_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        type text NOT NULL,
        config jsonb NOT NULL,
        asset_paths jsonb NOT NULL DEFAULT '[]',
        embedding_model text,
        embedding_dimensions integer,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX knowledge_bases_org ON knowledge_bases (organization_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE knowledge_base_jobs (
        knowledge_base_job_id uuid PRIMARY KEY,
        knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases(knowledge_base_id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        status text NOT NULL,
        status_detail jsonb,
        errors jsonb NOT NULL DEFAULT '[]',
        bytes_ingested bigint NOT NULL DEFAULT 0,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX knowledge_base_jobs_kb ON knowledge_base_jobs (knowledge_base_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE knowledge_base_chunks (
        knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases(knowledge_base_id) ON DELETE CASCADE,
        asset_path text NOT NULL,
        chunk_index integer NOT NULL,
        chunk_id uuid NOT NULL UNIQUE,
        content_hash text NOT NULL,
        content text NOT NULL,
        meta jsonb NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED,
        embedding vector,
        embedding_model text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (knowledge_base_id, asset_path, chunk_index)
      )`);
    await q.query(`CREATE INDEX knowledge_base_chunks_tsv ON knowledge_base_chunks USING gin (tsv)`);
    await q.query(`CREATE INDEX knowledge_base_chunks_meta ON knowledge_base_chunks USING gin (meta jsonb_path_ops)`);
    await q.query(
      `CREATE INDEX knowledge_base_chunks_hash ON knowledge_base_chunks (knowledge_base_id, asset_path, content_hash)`,
    );
    await q.query(`
      CREATE TABLE knowledge_base_queries (
        knowledge_base_query_id uuid PRIMARY KEY,
        knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases(knowledge_base_id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        query text NOT NULL,
        query_args jsonb NOT NULL,
        entries jsonb NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX knowledge_base_queries_kb ON knowledge_base_queries (knowledge_base_id, created_at DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE knowledge_base_queries`);
    await q.query(`DROP TABLE knowledge_base_chunks`);
    await q.query(`DROP TABLE knowledge_base_jobs`);
    await q.query(`DROP TABLE knowledge_bases`);
  }
}

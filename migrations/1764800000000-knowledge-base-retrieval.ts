import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retrieval on top of knowledge bases: persisted searches (a model's answer grounded in the chunks it cites),
 * retrievers (several knowledge bases fused, optionally reranked) and their persisted queries.
 * A retriever's components are a jsonb array on its row: they are read and written with the retriever.
 */
export class KnowledgeBaseRetrieval1764800000000 implements MigrationInterface {
  name = 'KnowledgeBaseRetrieval1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE knowledge_base_searches (
        knowledge_base_search_id uuid PRIMARY KEY,
        knowledge_base_id uuid NOT NULL REFERENCES knowledge_bases(knowledge_base_id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        query text NOT NULL,
        query_args jsonb NOT NULL,
        result text NOT NULL,
        entries jsonb NOT NULL,
        model text,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX knowledge_base_searches_kb ON knowledge_base_searches (knowledge_base_id, created_at DESC)`,
    );
    await q.query(`
      CREATE TABLE retrievers (
        retriever_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        components jsonb NOT NULL DEFAULT '[]',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX retrievers_org ON retrievers (organization_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE retriever_queries (
        retriever_query_id uuid PRIMARY KEY,
        retriever_id uuid NOT NULL REFERENCES retrievers(retriever_id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        query text NOT NULL,
        query_args jsonb NOT NULL,
        outputs jsonb NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX retriever_queries_retriever ON retriever_queries (retriever_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE retriever_queries`);
    await q.query(`DROP TABLE retrievers`);
    await q.query(`DROP TABLE knowledge_base_searches`);
  }
}

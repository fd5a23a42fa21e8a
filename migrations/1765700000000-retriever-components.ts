import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retriever components as their own resource (/retriever-components): a retriever names them in
 * `component_ids` beside its inline components, and reads them as they are at query time. A component a
 * retriever names cannot be deleted (409), so the ids stay valid; the retriever's deletion frees them.
 */
export class RetrieverComponents1765700000000 implements MigrationInterface {
  name = 'RetrieverComponents1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE retriever_components (
        retriever_component_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        type text NOT NULL,
        config jsonb NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX retriever_components_org ON retriever_components (organization_id, created_at DESC)`);
    await q.query(`ALTER TABLE retrievers ADD COLUMN component_ids uuid[] NOT NULL DEFAULT '{}'`);
    await q.query(`CREATE INDEX retrievers_component_ids ON retrievers USING gin (component_ids)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE retrievers DROP COLUMN component_ids`);
    await q.query(`DROP TABLE retriever_components`);
  }
}

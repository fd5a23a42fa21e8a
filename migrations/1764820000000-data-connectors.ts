import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data connectors and their jobs; asset metadata; schedules and transforms of knowledge bases.
 *
 * - `data_connectors.config` holds the request's config with its secret members replaced by
 *   `{"sealed": "<base64 AES-256-GCM envelope>"}` (bound to the connector id): never answered.
 * - `assets.meta` (string values): what a data job knows of the item an asset came from (source URI, title,
 *   fetched-at, content type, content hash, version). Knowledge base jobs copy it into chunk `meta`; data jobs
 *   compare `version` and `content_hash` to skip unchanged items.
 * - `knowledge_bases.schedule_expression` and `transforms`, which the wire format has and which were ignored.
 */
export class DataConnectors1764820000000 implements MigrationInterface {
  name = 'DataConnectors1764820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE data_connectors (
        data_connector_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        type text NOT NULL,
        config jsonb NOT NULL,
        bucket_id uuid NOT NULL,
        schedule_expression text,
        transforms jsonb NOT NULL DEFAULT '[]',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX data_connectors_org ON data_connectors (organization_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE data_jobs (
        data_job_id uuid PRIMARY KEY,
        data_connector_id uuid NOT NULL REFERENCES data_connectors(data_connector_id) ON DELETE CASCADE,
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
    await q.query(`CREATE INDEX data_jobs_connector ON data_jobs (data_connector_id, created_at DESC)`);
    await q.query(`CREATE INDEX data_jobs_open ON data_jobs (updated_at) WHERE status IN ('QUEUED', 'RUNNING')`);
    await q.query(`ALTER TABLE assets ADD COLUMN meta jsonb`);
    await q.query(`ALTER TABLE knowledge_bases ADD COLUMN schedule_expression text`);
    await q.query(`ALTER TABLE knowledge_bases ADD COLUMN transforms jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE knowledge_bases DROP COLUMN transforms`);
    await q.query(`ALTER TABLE knowledge_bases DROP COLUMN schedule_expression`);
    await q.query(`ALTER TABLE assets DROP COLUMN meta`);
    await q.query(`DROP TABLE data_jobs`);
    await q.query(`DROP TABLE data_connectors`);
  }
}

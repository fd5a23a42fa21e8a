import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Integrations (webhook, chatapp, codehost_app) and their delivery log: one row per hit of an integration's
 * handler, whatever the verdict. `dedupe_key` (the chat app's event id, the code host's delivery id, a
 * webhook's Idempotency-Key) is unique per integration, so a repeated delivery starts nothing twice. The
 * rate limit counts an integration's recent deliveries (integration_deliveries_recent).
 */
export class Integrations1764840000000 implements MigrationInterface {
  name = 'Integrations1764840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE integrations (
        integration_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        type text NOT NULL,
        config jsonb NOT NULL,
        structure_ids jsonb NOT NULL DEFAULT '[]',
        assistant_ids jsonb NOT NULL DEFAULT '[]',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX integrations_org ON integrations (organization_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE integration_deliveries (
        delivery_id uuid PRIMARY KEY,
        integration_id uuid NOT NULL REFERENCES integrations(integration_id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        received_at timestamptz NOT NULL,
        verdict text NOT NULL,
        http_status integer NOT NULL,
        event text,
        delivery_key text,
        dedupe_key text,
        status text,
        status_detail jsonb,
        structure_run_ids jsonb NOT NULL DEFAULT '[]',
        assistant_run_ids jsonb NOT NULL DEFAULT '[]',
        deployment_ids jsonb NOT NULL DEFAULT '[]',
        errors jsonb NOT NULL DEFAULT '[]',
        payload jsonb,
        updated_at timestamptz NOT NULL,
        completed_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX integration_deliveries_recent ON integration_deliveries (integration_id, received_at DESC)`,
    );
    await q.query(
      `CREATE UNIQUE INDEX integration_deliveries_dedupe ON integration_deliveries (integration_id, dedupe_key) WHERE dedupe_key IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX integration_deliveries_open ON integration_deliveries (updated_at) WHERE status IN ('QUEUED', 'RUNNING')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE integration_deliveries`);
    await q.query(`DROP TABLE integrations`);
  }
}

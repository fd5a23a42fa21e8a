import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys (docs/run-control.md#idempotency-keys): one row per organization, operation, target and key,
 * naming the record the first request made and the hash of its body; the records show their key.
 */
export class IdempotencyKeys1765100000000 implements MigrationInterface {
  name = 'IdempotencyKeys1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        operation text NOT NULL,
        target text NOT NULL,
        key text NOT NULL,
        body_hash text NOT NULL,
        record_kind text NOT NULL,
        record_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (organization_id, operation, target, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);
    await q.query(`CREATE INDEX idempotency_keys_record_idx ON idempotency_keys (record_id)`);
    for (const table of ['runs', 'knowledge_base_jobs', 'data_jobs']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN idempotency_key text`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['runs', 'knowledge_base_jobs', 'data_jobs']) {
      await q.query(`ALTER TABLE ${table} DROP COLUMN idempotency_key`);
    }
    await q.query(`DROP TABLE idempotency_keys`);
  }
}

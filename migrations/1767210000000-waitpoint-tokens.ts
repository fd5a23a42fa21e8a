import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Waitpoint tokens (docs/waitpoints.md#tokens-for-code): a run's own code creates a waitpoint (kind `token`)
 * through its credential, at most once per idempotency key of the run, and waits for its completion's output.
 */
export class WaitpointTokens1767210000000 implements MigrationInterface {
  name = 'WaitpointTokens1767210000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE waitpoints DROP CONSTRAINT waitpoints_kind_check;
      ALTER TABLE waitpoints ADD CONSTRAINT waitpoints_kind_check CHECK (kind IN ('tool_approval', 'token'));
      ALTER TABLE waitpoints ADD COLUMN idempotency_key text;
      CREATE UNIQUE INDEX waitpoints_run_idempotency_key ON waitpoints (run_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM waitpoints WHERE kind = 'token';
      DROP INDEX waitpoints_run_idempotency_key;
      ALTER TABLE waitpoints DROP COLUMN idempotency_key;
      ALTER TABLE waitpoints DROP CONSTRAINT waitpoints_kind_check;
      ALTER TABLE waitpoints ADD CONSTRAINT waitpoints_kind_check CHECK (kind IN ('tool_approval'));
    `);
  }
}

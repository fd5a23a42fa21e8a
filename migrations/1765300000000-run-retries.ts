import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retries of lost runs (docs/run-control.md#retries-of-lost-runs): a structure, function or tool may declare a
 * retry policy, a run carries the one it runs under, its attempt number and the endings of its earlier attempts.
 */
export class RunRetries1765300000000 implements MigrationInterface {
  name = 'RunRetries1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE code_resources ADD COLUMN retry_policy jsonb`);
    await q.query(
      `ALTER TABLE runs ADD COLUMN retry_policy jsonb,
         ADD COLUMN attempt integer NOT NULL DEFAULT 1,
         ADD COLUMN attempts jsonb NOT NULL DEFAULT '[]'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN retry_policy, DROP COLUMN attempt, DROP COLUMN attempts`);
    await q.query(`ALTER TABLE code_resources DROP COLUMN retry_policy`);
  }
}

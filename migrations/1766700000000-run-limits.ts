import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The limits a run executed under, as the worker that started it enforced them (written with RUNNING; GET
 * /api/runs/{run_id}/limits, src/services/code/runs/limits.ts). Null until then, and for runs started before.
 */
export class RunLimits1766700000000 implements MigrationInterface {
  name = 'RunLimits1766700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN limits jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN limits`);
  }
}

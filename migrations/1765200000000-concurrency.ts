import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Concurrency keys and limits (docs/run-control.md#concurrency-keys-and-limits): a structure, function or tool
 * may declare `concurrency` and have its queue paused; a run may carry a `concurrency_key`. The execution slots
 * of runs name their resource and key, so that admission (src/jobs/admission.ts) counts them per resource and
 * per key as well as per organization.
 */
export class Concurrency1765200000000 implements MigrationInterface {
  name = 'Concurrency1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE code_resources ADD COLUMN concurrency jsonb, ADD COLUMN queue_paused_at timestamptz`);
    await q.query(`ALTER TABLE runs ADD COLUMN concurrency_key text`);
    await q.query(`ALTER TABLE execution_slots ADD COLUMN resource_id uuid, ADD COLUMN concurrency_key text`);
    await q.query(
      `CREATE INDEX execution_slots_resource ON execution_slots (resource_id, concurrency_key, state)
        WHERE resource_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE execution_slots DROP COLUMN resource_id, DROP COLUMN concurrency_key`);
    await q.query(`ALTER TABLE runs DROP COLUMN concurrency_key`);
    await q.query(`ALTER TABLE code_resources DROP COLUMN concurrency, DROP COLUMN queue_paused_at`);
  }
}

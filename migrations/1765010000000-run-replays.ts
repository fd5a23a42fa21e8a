import { MigrationInterface, QueryRunner } from 'typeorm';

/** A replay is a new run made from a finished one (docs/run-control.md#replay): it names the run it replays. */
export class RunReplays1765010000000 implements MigrationInterface {
  name = 'RunReplays1765010000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN replayed_from_run_id uuid REFERENCES runs ON DELETE SET NULL`);
    await q.query(
      `CREATE INDEX runs_replayed_from_idx ON runs (replayed_from_run_id) WHERE replayed_from_run_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN replayed_from_run_id`);
  }
}

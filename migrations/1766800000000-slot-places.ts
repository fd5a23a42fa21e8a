import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A place in a concurrency key's queue taken for a run before its workflow asked (src/jobs/admission.ts,
 * `placeOlderRunsOfKey`): `asked` is false until the run's own workflow asks, so that its first ask still applies
 * its key's strategy and says whether it runs in its parent's slot. Rows of before were all asked.
 */
export class SlotPlaces1766800000000 implements MigrationInterface {
  name = 'SlotPlaces1766800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE execution_slots ADD COLUMN asked boolean NOT NULL DEFAULT true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE execution_slots DROP COLUMN asked`);
  }
}

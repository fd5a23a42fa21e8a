import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run credentials are found by run when a run ends (they are deleted then) and when a run is deleted (the
 * foreign key cascades): without an index both scan every API key.
 */
export class RunCredentialsIndex1764100000000 implements MigrationInterface {
  name = 'RunCredentialsIndex1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX api_keys_run_idx ON api_keys (run_id) WHERE run_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX api_keys_run_idx`);
  }
}

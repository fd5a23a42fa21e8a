import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The attempt of the execute activity that claimed a run's execution, written before its process is spawned
 * (src/services/code/runs/lifecycle.ts claimExecution): a retry whose earlier attempt claimed the run does not
 * start the user's code a second time, even while that attempt, presumed lost (a missed heartbeat under
 * load), is in fact still starting it.
 */
export class RunExecutionClaim1764920000000 implements MigrationInterface {
  name = 'RunExecutionClaim1764920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN execution_attempt int`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN execution_attempt`);
  }
}

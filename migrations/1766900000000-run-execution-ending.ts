import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How a run's process ended, as the execute activity recorded it beside its answer to the workflow
 * (src/services/code/runs/lifecycle.ts `recordEnding`): a retry of the activity whose answer was lost (Temporal
 * unreachable past the worker's retries) answers it instead of WorkerLost. Null otherwise; cleared when the run
 * ends and when a retry policy starts its next attempt.
 */
export class RunExecutionEnding1766900000000 implements MigrationInterface {
  name = 'RunExecutionEnding1766900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN execution_ending jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN execution_ending`);
  }
}

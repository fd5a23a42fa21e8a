import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The per-organization fair share of execution (src/jobs/admission.ts): one row per job that holds one of its
 * organization's execution slots (HOLDING) or waits for one (WAITING, in `queued_at` order). A job's row goes
 * when the job ends; the reconciler removes the rows of jobs whose workflow closed without removing its own.
 */
export class ExecutionSlots1764950000000 implements MigrationInterface {
  name = 'ExecutionSlots1764950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE execution_slots (
        job_kind text NOT NULL,
        job_id uuid NOT NULL,
        organization_id uuid NOT NULL,
        workflow_id text NOT NULL,
        state text NOT NULL CHECK (state IN ('WAITING', 'HOLDING')),
        queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        granted_at timestamptz,
        PRIMARY KEY (job_kind, job_id)
      )`);
    await q.query(`CREATE INDEX execution_slots_queue ON execution_slots (organization_id, state, queued_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE execution_slots`);
  }
}

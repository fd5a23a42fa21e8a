import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Waitpoints (docs/waitpoints.md): a record of what a run waits for (a person's approval of a tool call), which
 * the API, the console or a signed callback URL completes. A tool says whether its calls need approval, and how
 * long one may wait. A run that ends (by any path: its workflow, the reconciler, a cancel) cancels its waitpoints
 * still waiting, in the same statement, by trigger.
 */
export class Waitpoints1767200000000 implements MigrationInterface {
  name = 'Waitpoints1767200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE code_resources ADD COLUMN requires_approval boolean NOT NULL DEFAULT false;
      ALTER TABLE code_resources ADD COLUMN approval_timeout_seconds integer
        CHECK (approval_timeout_seconds BETWEEN 1 AND 2592000);
      CREATE TABLE waitpoints (
        waitpoint_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations (organization_id) ON DELETE CASCADE,
        run_id uuid NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('tool_approval')),
        status text NOT NULL CHECK (status IN ('WAITING', 'COMPLETED', 'TIMED_OUT', 'CANCELLED')),
        subject jsonb NOT NULL,
        timeout_seconds integer NOT NULL,
        expires_at timestamptz NOT NULL,
        completion jsonb,
        completed_by text,
        completed_at timestamptz,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE INDEX waitpoints_organization ON waitpoints (organization_id, created_at DESC, waitpoint_id DESC);
      CREATE INDEX waitpoints_run ON waitpoints (run_id);
      CREATE FUNCTION cancel_waitpoints_of_ended_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE waitpoints SET status = 'CANCELLED', completed_at = now(), updated_at = now(),
               completion = jsonb_build_object('approved', false, 'reason', 'The run ended ' || NEW.status)
         WHERE run_id = NEW.run_id AND status = 'WAITING';
        RETURN NULL;
      END $$;
      CREATE TRIGGER runs_ended_cancel_waitpoints AFTER UPDATE OF status ON runs
        FOR EACH ROW WHEN (NEW.status IN ('SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED') AND OLD.status IS DISTINCT FROM NEW.status)
        EXECUTE FUNCTION cancel_waitpoints_of_ended_run();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER runs_ended_cancel_waitpoints ON runs;
      DROP FUNCTION cancel_waitpoints_of_ended_run();
      DROP TABLE waitpoints;
      ALTER TABLE code_resources DROP COLUMN approval_timeout_seconds;
      ALTER TABLE code_resources DROP COLUMN requires_approval;
    `);
  }
}

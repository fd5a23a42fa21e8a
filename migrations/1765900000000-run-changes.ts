import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organization's stream of run changes (GET /api/runs/stream, src/api/sse/run-changes.ts) reads its runs by
 * `updated_at`, and wakes on the `run_updates` notifications that name the organization: every status change
 * (src/jobs/transition.ts) and, from this trigger, every new run.
 */
export class RunChanges1765900000000 implements MigrationInterface {
  name = 'RunChanges1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX runs_org_updated_idx ON runs (organization_id, updated_at)`);
    await q.query(`
      CREATE FUNCTION notify_run_created() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('run_updates',
          NEW.run_id::text || ' ' || extract(epoch FROM now())::text || ' ' || NEW.organization_id::text);
        RETURN NULL;
      END $$;
      CREATE TRIGGER runs_created AFTER INSERT ON runs FOR EACH ROW EXECUTE FUNCTION notify_run_created();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER runs_created ON runs; DROP FUNCTION notify_run_created()`);
    await q.query(`DROP INDEX runs_org_updated_idx`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Schedules of structures, functions and assistants (docs/run-control.md#schedules). The row is what the api
 * answers; the Temporal Schedule `run-schedule-<uuid>` is what fires. A fire makes a run whose id derives from
 * `schedule:<schedule_id>:<nominal time>`, so the runs' primary key is what keeps a retried fire from
 * making two runs (no column here).
 */
export class RunSchedules1765400000000 implements MigrationInterface {
  name = 'RunSchedules1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE run_schedules (
        schedule_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        resource_kind text NOT NULL CHECK (resource_kind IN ('structure', 'function', 'assistant')),
        resource_id uuid NOT NULL,
        schedule_expression text NOT NULL,
        time_zone text NOT NULL DEFAULT 'UTC',
        args jsonb NOT NULL DEFAULT '[]',
        input jsonb,
        enabled boolean NOT NULL DEFAULT true,
        overlap_policy text NOT NULL DEFAULT 'skip'
          CHECK (overlap_policy IN ('skip', 'buffer_one', 'allow_all', 'cancel_other')),
        catchup_window_seconds integer NOT NULL DEFAULT 60,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX run_schedules_resource ON run_schedules (organization_id, resource_id, created_at DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE run_schedules`);
  }
}

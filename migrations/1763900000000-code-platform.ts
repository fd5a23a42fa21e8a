import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Structures, functions and tools (one table, `kind`), their deployments, runs, run events and run logs.
 * Events and logs carry a per-run sequence taken from a counter on the run row: writers of one run are
 * serialized by that row lock, so sequence order is commit order and readers never skip a late commit.
 */
export class CodePlatform1763900000000 implements MigrationInterface {
  name = 'CodePlatform1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE code_resources (
        resource_id uuid PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('structure', 'function', 'tool')),
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        code jsonb NOT NULL,
        config_file text,
        env_vars jsonb NOT NULL DEFAULT '[]',
        webhook_enabled boolean NOT NULL DEFAULT false,
        latest_deployment_id uuid,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX code_resources_org_idx ON code_resources (organization_id, kind, created_at);

      CREATE TABLE deployments (
        deployment_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        resource_id uuid NOT NULL REFERENCES code_resources ON DELETE CASCADE,
        resource_kind text NOT NULL,
        status text NOT NULL CHECK (status IN ('QUEUED', 'DEPLOYING', 'SUCCEEDED', 'FAILED', 'ERROR')),
        status_detail jsonb,
        code_source jsonb NOT NULL,
        build_path text,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      );
      CREATE INDEX deployments_resource_idx ON deployments (resource_id, created_at);

      CREATE TABLE runs (
        run_id uuid PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('structure', 'function', 'tool')),
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        resource_id uuid NOT NULL REFERENCES code_resources ON DELETE CASCADE,
        deployment_id uuid,
        status text NOT NULL CHECK (status IN ('QUEUED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED')),
        status_detail jsonb,
        args jsonb NOT NULL DEFAULT '[]',
        env_vars jsonb NOT NULL DEFAULT '[]',
        input jsonb,
        output jsonb,
        output_timestamp double precision,
        started_at timestamptz,
        completed_at timestamptz,
        event_seq bigint NOT NULL DEFAULT 0,
        log_seq bigint NOT NULL DEFAULT 0,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX runs_resource_idx ON runs (resource_id, created_at);
      CREATE INDEX runs_open_idx ON runs (status) WHERE status IN ('QUEUED', 'STARTING', 'RUNNING');

      CREATE TABLE run_events (
        event_id uuid PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES runs ON DELETE CASCADE,
        seq bigint NOT NULL,
        organization_id uuid NOT NULL,
        type text NOT NULL,
        origin text NOT NULL,
        payload jsonb,
        timestamp double precision NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (run_id, seq)
      );

      CREATE TABLE run_logs (
        run_id uuid NOT NULL REFERENCES runs ON DELETE CASCADE,
        seq bigint NOT NULL,
        stream text NOT NULL CHECK (stream IN ('stdout', 'stderr')),
        line text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, seq)
      );

      -- A credential scoped to one run (GT_CLOUD_API_KEY inside user code): may post and read that run's
      -- events and read the run, nothing more; deactivated when the run ends.
      ALTER TABLE api_keys ADD COLUMN run_id uuid REFERENCES runs ON DELETE CASCADE;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE api_keys DROP COLUMN run_id; DROP TABLE run_logs, run_events, runs, deployments, code_resources`,
    );
  }
}

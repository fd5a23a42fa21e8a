import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spans of structure runs, as griptape's observability driver exports them (OpenTelemetry spans, one JSON
 * object each). `span` is what was posted; `start_time` orders the list; `bytes` bounds what a run keeps.
 */
export class RunSpans1764300000000 implements MigrationInterface {
  name = 'RunSpans1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE run_spans (
        id bigserial PRIMARY KEY,
        run_id uuid NOT NULL REFERENCES runs ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        start_time timestamptz NOT NULL,
        span jsonb NOT NULL,
        bytes int NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX run_spans_run_idx ON run_spans (run_id, start_time, id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE run_spans`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log (docs/people.md#audit-log): one row per audited request (sign-ins, failed ones too, sessions
 * ended, keys, invites, secrets, members, integrations and connections changed, every deletion), appended by the
 * route builder and never updated. `organization_id` is null only for a failed sign-in with an unknown email.
 * Rows older than AUDIT_RETENTION_DAYS are deleted by the reconciler. No foreign key: the events of a deleted
 * organization (its deletion among them) stay until then.
 */
export class AuditEvents1767160000000 implements MigrationInterface {
  name = 'AuditEvents1767160000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_events (
        audit_event_id uuid PRIMARY KEY,
        organization_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        operation text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        status integer NOT NULL,
        user_id uuid,
        api_key_id uuid,
        session_id uuid,
        address text,
        detail jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_events_organization_idx ON audit_events (organization_id, created_at DESC);
      CREATE INDEX audit_events_created_idx ON audit_events (created_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
  }
}

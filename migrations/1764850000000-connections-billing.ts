import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Connections (OAuth tokens of a code host, sealed with the secrets key) and billing: the payment provider's
 * customer of each organization, and the billing events already applied (idempotent by event id).
 * The organization's `entitlement` stays where it is (organizations.entitlement); billing events move it.
 */
export class ConnectionsBilling1764850000000 implements MigrationInterface {
  name = 'ConnectionsBilling1764850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE connections (
        connection_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(organization_id) ON DELETE CASCADE,
        type text NOT NULL,
        name text NOT NULL,
        access_token_encrypted bytea NOT NULL,
        refresh_token_encrypted bytea,
        expires_at timestamptz,
        refresh_token_expires_at timestamptz,
        scope text,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX connections_org ON connections (organization_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE billing_customers (
        organization_id uuid PRIMARY KEY REFERENCES organizations(organization_id) ON DELETE CASCADE,
        customer_id text NOT NULL UNIQUE,
        entitlement_event_at timestamptz,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE billing_events (
        event_id text PRIMARY KEY,
        organization_id uuid REFERENCES organizations(organization_id) ON DELETE CASCADE,
        type text NOT NULL,
        verdict text NOT NULL,
        received_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing_events`);
    await q.query(`DROP TABLE billing_customers`);
    await q.query(`DROP TABLE connections`);
  }
}

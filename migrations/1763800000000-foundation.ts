import { MigrationInterface, QueryRunner } from 'typeorm';

/** Organizations, users, API keys, secrets, invites, buckets and assets. */
export class Foundation1763800000000 implements MigrationInterface {
  name = 'Foundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        organization_id uuid PRIMARY KEY,
        name text NOT NULL,
        entitlement text NOT NULL DEFAULT 'FREE',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE users (
        user_id uuid PRIMARY KEY,
        email text NOT NULL CHECK (email = lower(email)),
        name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX users_email_key ON users (email);
      CREATE TABLE memberships (
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organization_id, user_id)
      );
      CREATE INDEX memberships_user_idx ON memberships (user_id);
      CREATE TABLE api_keys (
        api_key_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        user_id uuid REFERENCES users ON DELETE CASCADE,
        name text NOT NULL,
        key_hash bytea NOT NULL,
        active boolean NOT NULL DEFAULT true,
        last_used timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash);
      CREATE INDEX api_keys_org_idx ON api_keys (organization_id, created_at);
      CREATE TABLE secrets (
        secret_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        value_encrypted bytea NOT NULL,
        last_used timestamptz,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX secrets_org_name_key ON secrets (organization_id, name);
      CREATE TABLE invites (
        invite_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        email text NOT NULL CHECK (email = lower(email)),
        status text NOT NULL CHECK (status IN ('PENDING', 'ACCEPTED', 'REJECTED', 'EXPIRED')),
        expires_at timestamptz NOT NULL,
        responded_at timestamptz,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX invites_org_idx ON invites (organization_id, created_at);
      CREATE INDEX invites_email_idx ON invites (email, created_at);
      CREATE TABLE buckets (
        bucket_id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        name text NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX buckets_org_idx ON buckets (organization_id, created_at);
      CREATE TABLE assets (
        bucket_id uuid NOT NULL REFERENCES buckets ON DELETE CASCADE,
        name text NOT NULL,
        organization_id uuid NOT NULL REFERENCES organizations ON DELETE CASCADE,
        size bigint,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (bucket_id, name)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE assets, buckets, invites, secrets, api_keys, memberships, users, organizations`);
  }
}

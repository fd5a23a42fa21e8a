import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People sign in (docs/people.md): a user's password hash (null: no password yet, so no password sign-in), their
 * cookie sessions and their password-reset links.
 *
 * A session is in one organization, so it references the membership: removing the member, or deleting the user or
 * the organization, deletes the session with it, and the next request with its cookie is a 401. The token and the
 * CSRF token are stored as SHA-256 hashes only. A reset link (its token hashed too) is used once (`used_at`).
 */
export class People1767140000000 implements MigrationInterface {
  name = 'People1767140000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE users ADD COLUMN password_hash text;
      CREATE TABLE user_sessions (
        session_id uuid PRIMARY KEY,
        token_hash bytea NOT NULL UNIQUE,
        csrf_hash bytea NOT NULL,
        organization_id uuid NOT NULL,
        user_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        -- Written at most every few seconds of use (src/services/accounts/sessions.ts): the idle timeout counts from it.
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        -- The absolute end (SESSION_MAX_AGE_SECONDS after the sign-in).
        expires_at timestamptz NOT NULL,
        -- The client address of the sign-in.
        address text,
        FOREIGN KEY (organization_id, user_id) REFERENCES memberships (organization_id, user_id) ON DELETE CASCADE
      );
      CREATE INDEX user_sessions_user_idx ON user_sessions (user_id);
      CREATE TABLE password_resets (
        token_hash bytea PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
      CREATE INDEX password_resets_user_idx ON password_resets (user_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE password_resets, user_sessions; ALTER TABLE users DROP COLUMN password_hash`);
  }
}

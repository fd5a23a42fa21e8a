import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OIDC sign-in (docs/people.md#oidc-sign-in): the provider's account (issuer and subject) a user signed in with,
 * so that the next sign-in finds them by it, whatever email the provider says then.
 */
export class UserIdentities1767190000000 implements MigrationInterface {
  name = 'UserIdentities1767190000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE user_identities (
        issuer text NOT NULL,
        subject text NOT NULL,
        user_id uuid NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
        email text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_sign_in_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (issuer, subject)
      );
      CREATE INDEX user_identities_user ON user_identities (user_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE user_identities`);
  }
}

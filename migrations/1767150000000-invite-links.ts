import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invite links (docs/people.md#invites): an invite made from now on carries the SHA-256 hash of its link's token,
 * so a person who has no account here can follow the link, set a password and accept. Invites made before have
 * none (null) and are answered as before, by a signed-in user.
 */
export class InviteLinks1767150000000 implements MigrationInterface {
  name = 'InviteLinks1767150000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invites ADD COLUMN link_token_hash bytea UNIQUE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invites DROP COLUMN link_token_hash`);
  }
}

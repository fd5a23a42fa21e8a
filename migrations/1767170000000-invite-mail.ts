import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Invites by mail (docs/people.md#invites): when the mail with an invite's link was sent, or why it was given up.
 */
export class InviteMail1767170000000 implements MigrationInterface {
  name = 'InviteMail1767170000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invites ADD COLUMN mailed_at timestamptz, ADD COLUMN mail_error text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invites DROP COLUMN mailed_at, DROP COLUMN mail_error`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A tool that requires approval may name a webhook (docs/waitpoints.md#notifications): each call waiting for
 * approval is posted there, signed with a secret of the organization, with the waitpoint's callback URL.
 */
export class ApprovalWebhooks1767220000000 implements MigrationInterface {
  name = 'ApprovalWebhooks1767220000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE code_resources ADD COLUMN approval_webhook jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE code_resources DROP COLUMN approval_webhook`);
  }
}

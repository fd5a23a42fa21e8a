import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a deployment deployed, as one comparable string (code location, config file, asset size and
 * update time or git commit): a create-deployment request without `force` reuses the latest deployment
 * with the same fingerprint instead of building again. Internal; never returned by the api.
 */
export class DeploymentSource1764000000000 implements MigrationInterface {
  name = 'DeploymentSource1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deployments ADD COLUMN source_fingerprint text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deployments DROP COLUMN source_fingerprint`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every organization has a default bucket (`default_bucket_id`), created with it: used where a bucket is
 * needed and none is named (GT_CLOUD_BUCKET_ID of runs). Existing organizations get one named "default".
 * The foreign key is deferred: an organization and its bucket are inserted in one transaction, each naming
 * the other.
 */
export class DefaultBuckets1764400000000 implements MigrationInterface {
  name = 'DefaultBuckets1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE organizations ADD COLUMN default_bucket_id uuid;
      WITH made AS (
        INSERT INTO buckets (bucket_id, organization_id, name, created_by, created_at, updated_at)
        SELECT gen_random_uuid(), organization_id, 'default', created_by, now(), now() FROM organizations
        RETURNING bucket_id, organization_id
      )
      UPDATE organizations o SET default_bucket_id = made.bucket_id FROM made WHERE made.organization_id = o.organization_id;
      ALTER TABLE organizations ALTER COLUMN default_bucket_id SET NOT NULL,
        ADD CONSTRAINT organizations_default_bucket_fk FOREIGN KEY (default_bucket_id) REFERENCES buckets DEFERRABLE INITIALLY DEFERRED;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizations DROP COLUMN default_bucket_id`);
  }
}

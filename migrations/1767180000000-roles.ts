import { MigrationInterface, QueryRunner } from 'typeorm';

const ROLE_CHECK = `CHECK (role IN ('owner', 'admin', 'member', 'viewer'))`;

/**
 * Roles (docs/people.md#roles): every membership has one, an invite says which it gives, an organization key
 * has its own (a user key acts with its user's). Members before roles keep what they could do: they become
 * owners, and so do organization keys; a membership made by code that predates roles (a rolling upgrade) is a
 * member. A role changed anywhere notifies `api_key_changes` with the hashes of the user's keys in that
 * organization, so every api process reads them again (src/api/http/key-cache.ts).
 */
export class Roles1767180000000 implements MigrationInterface {
  name = 'Roles1767180000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE memberships ADD COLUMN role text NOT NULL DEFAULT 'owner' ${ROLE_CHECK};
      ALTER TABLE memberships ALTER COLUMN role SET DEFAULT 'member';
      ALTER TABLE invites ADD COLUMN role text NOT NULL DEFAULT 'member' ${ROLE_CHECK};
      ALTER TABLE api_keys ADD COLUMN role text ${ROLE_CHECK};
      UPDATE api_keys SET role = 'owner' WHERE user_id IS NULL AND run_id IS NULL;
      CREATE FUNCTION notify_membership_role_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('api_key_changes', encode(k.key_hash, 'hex'))
           FROM api_keys k WHERE k.organization_id = OLD.organization_id AND k.user_id = OLD.user_id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER memberships_role_changed AFTER UPDATE OF role ON memberships
        FOR EACH ROW WHEN (OLD.role IS DISTINCT FROM NEW.role) EXECUTE FUNCTION notify_membership_role_change();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER memberships_role_changed ON memberships;
      DROP FUNCTION notify_membership_role_change();
      ALTER TABLE api_keys DROP COLUMN role;
      ALTER TABLE invites DROP COLUMN role;
      ALTER TABLE memberships DROP COLUMN role;
    `);
  }
}

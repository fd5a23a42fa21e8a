import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every api process caches authenticated keys (src/api/http/key-cache.ts). A key that is deactivated or
 * deleted, by any path (the accounts routes, a run's credential deleted when the run ends, a cascade from
 * its user or organization), notifies `api_key_changes` with its hash (hex), and every api process drops it.
 */
export class ApiKeyNotify1764900000000 implements MigrationInterface {
  name = 'ApiKeyNotify1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('api_key_changes', encode(OLD.key_hash, 'hex'));
        RETURN NULL;
      END $$;
      CREATE TRIGGER api_keys_changed AFTER UPDATE OF active, key_hash OR DELETE ON api_keys
        FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER api_keys_changed ON api_keys; DROP FUNCTION notify_api_key_change();`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * pgvector, for the knowledge bases' embeddings (HNSW indexes beside a tsvector, in the same database).
 * A server without it fails here with what to install, instead of at the first knowledge-base table.
 */
export class Vector1764600000000 implements MigrationInterface {
  name = 'Vector1764600000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ major }] = await q.query(`SELECT current_setting('server_version_num')::int / 10000 AS major`);
    // HNSW indexes came with pgvector 0.5.0.
    const [found] = await q.query(
      `SELECT default_version, string_to_array(default_version, '.')::int[] >= '{0,5,0}' AS hnsw FROM pg_available_extensions WHERE name = 'vector'`,
    );
    if (!found?.hnsw) {
      throw new Error(
        `this PostgreSQL ${major} server has ${found ? `pgvector ${found.default_version}; tarmac needs 0.5.0 or later` : 'no pgvector (extension "vector"), which tarmac needs'}. ` +
          `Install it on the database server: Debian/Ubuntu \`apt-get install postgresql-${major}-pgvector\` (the PGDG apt repository has it ` +
          `for every version), the Docker image pgvector/pgvector:pg${major}, or a managed service's "vector" extension. ` +
          'Or unset DATABASE_URL: `npm start` then runs a local PostgreSQL that has it.',
      );
    }
    try {
      await q.query(`CREATE EXTENSION IF NOT EXISTS vector`);
    } catch (err) {
      // pgvector is not a trusted extension: only a superuser (or a managed service's admin role) may create it.
      if ((err as { code?: string }).code !== '42501') throw err;
      const [{ db }] = await q.query(`SELECT current_database() AS db`);
      throw new Error(
        `the database role may not create the extension "vector": have a superuser run \`CREATE EXTENSION vector;\` in database ${db} once, then migrate again (${(err as Error).message})`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP EXTENSION IF EXISTS vector`);
  }
}

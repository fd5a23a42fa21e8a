// A migrated PostgreSQL of one test file's own, for the unit tests of SQL that start no stack (test/unit/jobs/):
// the pinned PostgreSQL with pgvector (src/cli/postgres/embedded-postgres.ts) in a temporary directory, or the
// server TEST_DATABASE_URL names, as the stack does (test/harness/stack.ts); migrated as the api migrates
// (src/persistence/data-source.ts). Tests on it write rows of their own and remove them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { startEmbeddedPostgres } from '../../src/cli/postgres/embedded-postgres';
import { loadConfig } from '../../src/config';
import { createDataSource, migrate } from '../../src/persistence/data-source';
import { freePort } from './ports';

export interface TestDatabase {
  ds: DataSource;
  url: string;
  stop: () => Promise<void>;
}

/**
 * A server whose data is deleted after the file need not survive a crash: without fsync, migrating and the
 * shutdown checkpoint take a third of the time (measured: start, migrate and stop in 6 s with fsync).
 */
async function throwaway(url: string): Promise<void> {
  const client = new Client(url);
  await client.connect();
  try {
    await client.query(`ALTER SYSTEM SET fsync = off`);
    await client.query(`ALTER SYSTEM SET synchronous_commit = off`);
    await client.query(`SELECT pg_reload_conf()`);
  } finally {
    await client.end();
  }
}

/** Starts (or reaches) the database and applies the migrations; `stop` closes and removes what it started. */
export async function migratedDatabase(): Promise<TestDatabase> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0)) await s().catch((err) => console.error('teardown:', err));
  };
  try {
    let url = process.env.TEST_DATABASE_URL;
    if (!url) {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-db-'));
      fs.chmodSync(root, 0o755); // as root, the server's own user must reach its data directory
      stops.unshift(async () => fs.rmSync(root, { recursive: true, force: true }));
      const pg = await startEmbeddedPostgres({
        dir: path.join(root, 'postgres'),
        port: await freePort(),
        database: 'tarmac_test',
        persistent: false,
        config: loadConfig(process.env),
      });
      stops.unshift(() => pg.stop());
      url = pg.url;
      await throwaway(url);
    }
    const ds = await createDataSource(url, { poolSize: 4, applicationName: 'tarmac-unit' }).initialize();
    stops.unshift(() => ds.destroy());
    await migrate(ds);
    return { ds, url, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// A migrated PostgreSQL of one test file's own, for the unit tests of SQL that start no stack (test/unit/jobs/):
// the pinned PostgreSQL with pgvector (src/cli/postgres/embedded-postgres.ts) on a copy, in memory, of a data
// directory initialised once per machine, or the server TEST_DATABASE_URL names, as the stack does (test/harness/stack.ts);
// migrated as the api migrates (src/persistence/data-source.ts). Tests on it write rows of their own and
// remove them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { postgresBinaries } from '../../src/cli/postgres/binaries';
import { passwordFileOf, startEmbeddedPostgres } from '../../src/cli/postgres/embedded-postgres';
import { postgresOsUser } from '../../src/cli/postgres/os-user';
import { loadConfig, type Config } from '../../src/config';
import { createDataSource, migrate } from '../../src/persistence/data-source';
import { freePort } from './ports';

export interface TestDatabase {
  ds: DataSource;
  url: string;
  stop: () => Promise<void>;
}

/**
 * In memory where the machine has it: a data directory is copied in 0.1 s there, 2.5 s on this machine's
 * shared disk.
 */
const TEMP = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

/** A directory the server's own OS user can reach (as root it is not root). */
const reachableTempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(TEMP, prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
};

/**
 * The data of a server deleted after its file need not survive a crash: without fsync, migrating and the
 * shutdown checkpoint take a fraction of the time (measured here: the stop in 0.6 s instead of 2 to 3 s).
 */
async function withoutFsync(url: string): Promise<void> {
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

/**
 * A data directory initialised (and set without fsync) once per machine and binaries, which each file copies:
 * initdb is most of a start (3.5 s of a 4 s start and migration on this loaded machine). Made aside and renamed
 * into place, so that files starting at once never see half of one (the one renamed second is dropped).
 */
async function template(config: Config): Promise<string> {
  const { version } = postgresBinaries(config, postgresOsUser());
  const home = path.join(TEMP, `tarmac-unit-postgres-${version}`);
  const dir = path.join(home, 'data');
  if (fs.existsSync(passwordFileOf(dir))) return dir;
  const making = reachableTempDir('tarmac-unit-postgres-making-');
  try {
    const pg = await startEmbeddedPostgres({
      dir: path.join(making, 'data'),
      port: await freePort(),
      database: 'tarmac_test',
      persistent: true,
      config,
    });
    try {
      await withoutFsync(pg.url);
    } finally {
      await pg.stop();
    }
    fs.renameSync(making, home);
  } catch (err) {
    fs.rmSync(making, { recursive: true, force: true });
    if (!fs.existsSync(passwordFileOf(dir))) throw err;
  }
  return dir;
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
      const config = loadConfig(process.env);
      const source = await template(config);
      const root = reachableTempDir('tarmac-db-');
      stops.unshift(async () => fs.rmSync(root, { recursive: true, force: true }));
      const dir = path.join(root, 'data');
      execFileSync('cp', ['-a', source, dir]);
      fs.copyFileSync(passwordFileOf(source), passwordFileOf(dir));
      const pg = await startEmbeddedPostgres({
        dir,
        port: await freePort(),
        database: 'tarmac_test',
        persistent: false,
        config,
      });
      stops.unshift(() => pg.stop());
      url = pg.url;
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

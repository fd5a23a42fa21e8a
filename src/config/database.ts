// PostgreSQL: the database of api and worker, and the local server `npm start` runs without one.
import path from 'node:path';
import type { EnvReader } from './env';

export interface DatabaseSettings {
  databaseUrl: string | undefined;
  /** PostgreSQL connections per api or worker process. */
  databasePoolSize: number;
  embeddedPostgresPort: number;
  /** A PostgreSQL (with pgvector) bin directory for the local server instead of the pinned build. */
  embeddedPostgresBinDir: string | undefined;
}

export function readDatabase(env: EnvReader): DatabaseSettings {
  const databaseUrl = env.optional('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl))
    env.problem('DATABASE_URL must be a postgres:// URL');
  const binDir = env.optional('EMBEDDED_POSTGRES_BIN_DIR');
  return {
    databaseUrl,
    databasePoolSize: env.int('DATABASE_POOL_SIZE', 10, 1, 1000),
    embeddedPostgresPort: env.int('EMBEDDED_POSTGRES_PORT', 54329, 1, 65535),
    embeddedPostgresBinDir: binDir === undefined ? undefined : path.resolve(binDir),
  };
}

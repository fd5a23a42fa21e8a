import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { migrations } from '../../migrations';
import { entities } from './entities';

/** `poolSize`: DATABASE_POOL_SIZE for the api and worker; small fixed pools for one-off tools. */
export function createDataSource(databaseUrl: string, opts: { poolSize?: number; applicationName?: string } = {}) {
  return new DataSource({
    type: 'postgres',
    url: databaseUrl,
    entities,
    migrations,
    synchronize: false,
    logging: false,
    poolSize: opts.poolSize ?? 10,
    applicationName: opts.applicationName ?? 'tarmac',
    extra: { connectionTimeoutMillis: 5000 },
  });
}

const MIGRATION_LOCK = 7_311_004; // arbitrary advisory-lock key owned by this project

/** Runs pending migrations, one process at a time (api replicas may start together). */
export async function migrate(ds: DataSource): Promise<string[]> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const ran = await ds.runMigrations({ transaction: 'each' });
    return ran.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}

// PostgreSQL connections of the benchmarks themselves. An error event without a listener would crash the
// process (and leave the Temporal dev server behind) when PostgreSQL stops first, e.g. on Ctrl-C.
import { Client, Pool } from 'pg';

const ignore = () => undefined;

export function pgClient(url: string, name: string): Client {
  const client = new Client({ connectionString: url, application_name: name });
  client.on('error', ignore);
  return client;
}

/** The same pool size as the api's DataSource (createDataSource: 10). */
export function pgPool(url: string, name: string): Pool {
  const pool = new Pool({ connectionString: url, max: 10, application_name: name });
  pool.on('error', ignore);
  return pool;
}

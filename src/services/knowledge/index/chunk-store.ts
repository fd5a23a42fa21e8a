// Where a knowledge base's chunks live. gtc_* types: the platform's own `knowledge_base_chunks` table.
// pg_vector: a table the platform creates in the outside PostgreSQL the knowledge base names
// (`connection_string` + the sealed `password`), `tarmac_kb_chunks_<id without dashes>`, with the same columns,
// generated tsvector, GIN indexes and per-knowledge-base HNSW index as ours, so ingest.ts, query.ts and
// vector-index.ts run the same SQL on either. That database needs the `vector` extension; when it is missing
// and cannot be created, the job says so (OutsideDatabaseError) instead of failing obscurely.
import net from 'node:net';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import type { KnowledgeBase } from '../../../persistence/entities/knowledge-base';
import { canonical, OutboundRefused, type OutboundPolicy } from '../../../security/outbound-policy';
import type { SecretBox } from '../../../security/secret-box';
import { adjustTermStats, tokenCountSql, TOTALS_TERM } from './full-text';

export interface ChunkStore {
  /** The chunks table (a safe identifier). */
  readonly table: string;
  /** Its full-text statistics per term (full-text.ts). */
  readonly termsTable: string;
  readonly outside: boolean;
  query<T = any>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Rows affected. */
  execute(sql: string, params?: unknown[]): Promise<number>;
  transaction<T>(fn: (tx: ChunkStore) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export class OutsideDatabaseError extends Error {
  readonly type = 'OutsideDatabaseError';
}

const CONNECT_TIMEOUT_MS = 10_000;

export function localChunkStore(ds: DataSource): ChunkStore {
  const over = (run: (sql: string, params?: unknown[]) => Promise<any>): ChunkStore => ({
    table: 'knowledge_base_chunks',
    termsTable: 'knowledge_base_terms',
    outside: false,
    query: (sql, params) => run(sql, params),
    // TypeORM answers [rows, count] for UPDATE and DELETE.
    execute: async (sql, params) => ((await run(sql, params)) as [unknown, number])[1],
    transaction: (fn) => ds.transaction((em) => fn(over((sql, params) => em.query(sql, params)))),
    close: async () => undefined,
  });
  return over((sql, params) => ds.query(sql, params));
}

export const outsideTableOf = (knowledgeBaseId: string) => `tarmac_kb_chunks_${knowledgeBaseId.replace(/-/g, '')}`;
const termsTableOf = (table: string) => `${table}_terms`;

/** The sealed password of a pg_vector config is bound to the knowledge base's id (secret-box.ts). */
export const sealPassword = (box: SecretBox, knowledgeBaseId: string, password: string) =>
  box.seal(password, `knowledge-base:${knowledgeBaseId}`).toString('base64');

/**
 * What every failure to connect answers, whatever the cause (a refused address, a closed port, a service that
 * is not PostgreSQL, this platform's own database, a wrong password): telling them apart would make the worker
 * a port scanner. The cause goes to the worker's log.
 */
export const OUTSIDE_UNREACHABLE =
  "The knowledge base's database could not be reached or refused the connection: check its host, port, database, " +
  'user, password and sslmode. Addresses of this platform, loopback, private, link-local and metadata ranges are ' +
  'refused unless an operator allows them (OUTBOUND_ALLOW)';

/** pg's TLS options for an sslmode (as pg reads it), naming the server as the tenant did (the address is checked). */
function sslOf(sslmode: string | null, servername: string | undefined) {
  if (sslmode === null || sslmode === 'disable') return false;
  return { ...(servername ? { servername } : {}), ...(sslmode === 'no-verify' ? { rejectUnauthorized: false } : {}) };
}

/**
 * A connected client to a pg_vector knowledge base's outside database: its host resolved once through the
 * outbound address policy, and the connection made to a checked address (the name kept for TLS).
 */
export async function connectOutside(kb: KnowledgeBase, box: SecretBox, policy: OutboundPolicy): Promise<Client> {
  const settings = kb.config.pg_vector as { connection_string?: string; password_sealed?: string } | undefined;
  if (!settings?.connection_string || !settings.password_sealed) {
    throw new OutsideDatabaseError('This pg_vector knowledge base has no connection string or password');
  }
  const password = box.open(Buffer.from(settings.password_sealed, 'base64'), `knowledge-base:${kb.knowledge_base_id}`);
  const given = new URL(settings.connection_string);
  const host = given.hostname.replace(/^\[|\]$/g, '');
  const port = Number(given.port) || 5432;
  const target = `${host} port ${port}`;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await policy.resolve(host, port);
  } catch (err) {
    if (!(err instanceof OutboundRefused)) policy.logFailure(target, (err as Error).message);
    throw new OutsideDatabaseError(OUTSIDE_UNREACHABLE);
  }
  const ssl = sslOf(given.searchParams.get('sslmode'), canonical(host) ? undefined : host);
  const reasons: string[] = [];
  for (const { address } of addresses) {
    // pg lets the connection string win over options: the checked address, port and password go into it.
    const url = new URL(settings.connection_string);
    url.hostname = net.isIPv6(address) ? `[${address}]` : address;
    url.port = String(port);
    url.search = '';
    url.password = encodeURIComponent(password);
    const client = new Client({
      connectionString: url.toString(),
      ssl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'tarmac-knowledge-base',
    });
    client.on('error', () => undefined); // a dropped connection fails the next query instead of the process
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      reasons.push(`${address}: ${(err as Error).message}`);
    }
  }
  policy.logFailure(target, reasons.join('; '));
  throw new OutsideDatabaseError(OUTSIDE_UNREACHABLE);
}

/** Where chunk stores are opened from: our database, and for pg_vector the sealed password and the policy. */
export interface ChunkStores {
  ds: DataSource;
  box: SecretBox;
  outbound: OutboundPolicy;
}

/** Opens the store of `kb`; for pg_vector, connects and creates the table and its indexes when missing. */
export async function openChunkStore(stores: ChunkStores, kb: KnowledgeBase): Promise<ChunkStore> {
  if (kb.type !== 'pg_vector') return localChunkStore(stores.ds);
  const client = await connectOutside(kb, stores.box, stores.outbound);
  const table = outsideTableOf(kb.knowledge_base_id);
  const over = (): ChunkStore => ({
    table,
    termsTable: termsTableOf(table),
    outside: true,
    query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
    execute: async (sql, params) => (await client.query(sql, params as unknown[])).rowCount ?? 0,
    // One connection: a transaction is BEGIN/COMMIT on it.
    transaction: async (fn) => {
      await client.query('BEGIN');
      try {
        const out = await fn(store);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    close: () => client.end().catch(() => undefined),
  });
  const store = over();
  try {
    await ensureOutsideTable(client, table);
    await ensureOutsideStats(store, kb.knowledge_base_id);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

async function ensureOutsideTable(client: Client, table: string): Promise<void> {
  const has = async () => (await client.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`)).rowCount === 1;
  if (!(await has())) {
    try {
      await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    } catch (err) {
      throw new OutsideDatabaseError(
        `The outside database has no "vector" extension and it could not be created (${(err as Error).message}): ` +
          'install pgvector on that server and run CREATE EXTENSION vector in that database',
      );
    }
  }
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${table} (
      knowledge_base_id uuid NOT NULL,
      asset_path text NOT NULL,
      chunk_index integer NOT NULL,
      chunk_id uuid NOT NULL UNIQUE,
      content_hash text NOT NULL,
      content text NOT NULL,
      meta jsonb NOT NULL,
      tsv tsvector,
      tsv_length integer,
      embedding vector,
      embedding_model text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (knowledge_base_id, asset_path, chunk_index)
    )`);
  // A table made before BM25 (full-text.ts) had a generated `simple` tsvector: its values stay, written by jobs from now on.
  await client.query(`ALTER TABLE ${table} ALTER COLUMN tsv DROP EXPRESSION IF EXISTS`);
  await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS tsv_length integer`);
  await client.query(`CREATE INDEX IF NOT EXISTS ${table}_tsv ON ${table} USING gin (tsv)`);
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${termsTableOf(table)} (
      knowledge_base_id uuid NOT NULL,
      term text NOT NULL,
      chunks bigint NOT NULL,
      tokens bigint NOT NULL,
      PRIMARY KEY (knowledge_base_id, term)
    )`);
  await client.query(`CREATE INDEX IF NOT EXISTS ${table}_meta ON ${table} USING gin (meta jsonb_path_ops)`);
}

/** A table made before BM25 has chunks and no statistics: they are computed once, from its chunks. */
async function ensureOutsideStats(store: ChunkStore, knowledgeBaseId: string): Promise<void> {
  const [known] = await store.query(
    `SELECT 1 AS one FROM ${store.termsTable} WHERE knowledge_base_id = $1 AND term = $2`,
    [knowledgeBaseId, TOTALS_TERM],
  );
  if (known) return;
  await store.transaction(async (tx) => {
    await tx.execute(`UPDATE ${tx.table} SET tsv_length = ${tokenCountSql('tsv')} WHERE tsv_length IS NULL`);
    await adjustTermStats(tx, knowledgeBaseId, 1, 'true');
  });
}

/** Drops a pg_vector knowledge base's table in its outside database (its delete; best effort when unreachable). */
export async function dropOutsideTable(kb: KnowledgeBase, box: SecretBox, policy: OutboundPolicy): Promise<boolean> {
  let client: Client | undefined;
  try {
    client = await connectOutside(kb, box, policy);
    const table = outsideTableOf(kb.knowledge_base_id);
    await client.query(`DROP TABLE IF EXISTS ${table}, ${termsTableOf(table)}`);
    return true;
  } catch {
    return false;
  } finally {
    await client?.end().catch(() => undefined);
  }
}

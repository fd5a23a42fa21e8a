// Rows of every kind of job (src/jobs/kinds.ts) written with plain SQL, for the kernel's unit tests
// (test/unit/jobs/): an organization of a test's own (with its default bucket) and one job of a kind with the
// parent record its table refers to; removing the organization removes them all (ON DELETE CASCADE).
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { JobKind, Row } from '../../src/jobs/kinds';
import { migratedDatabase, type TestDatabase } from './postgres';

/** A new organization and its default bucket (the bucket's foreign key is deferred to the commit). */
export async function newOrganization(ds: DataSource): Promise<string> {
  const organizationId = randomUUID();
  await ds.transaction(async (em) => {
    const bucketId = randomUUID();
    await em.query(
      `INSERT INTO organizations (organization_id, name, created_by, default_bucket_id) VALUES ($1, $2, 'test', $3)`,
      [organizationId, `kernel-${organizationId.slice(0, 8)}`, bucketId],
    );
    await em.query(
      `INSERT INTO buckets (bucket_id, organization_id, name, created_by) VALUES ($1, $2, 'default', 'test')`,
      [bucketId, organizationId],
    );
  });
  return organizationId;
}

export const removeOrganization = (ds: DataSource, organizationId: string) =>
  ds.query(`DELETE FROM organizations WHERE organization_id = $1`, [organizationId]);

/** Inserts the parent a job of `kind` belongs to; answers the columns that name it. */
async function parentOf(db: DataSource | EntityManager, kind: JobKind, org: string): Promise<Row> {
  const id = randomUUID();
  const insert = (sql: string) => db.query(sql, [id, org]);
  switch (kind.table) {
    case 'runs':
    case 'deployments':
      await insert(`INSERT INTO code_resources (resource_id, kind, organization_id, name, code, created_by)
                    VALUES ($1, 'structure', $2, 'kernel', '{}', 'test')`);
      return kind.table === 'runs' ? { resource_id: id } : { resource_id: id, resource_kind: 'structure' };
    case 'knowledge_base_jobs':
      await insert(`INSERT INTO knowledge_bases (knowledge_base_id, organization_id, name, type, config, created_by, created_at, updated_at)
                    VALUES ($1, $2, 'kernel', 'vector', '{}', 'test', now(), now())`);
      return { knowledge_base_id: id };
    case 'data_jobs':
      await insert(`INSERT INTO data_connectors (data_connector_id, organization_id, name, type, config, bucket_id, created_by, created_at, updated_at)
                    VALUES ($1, $2, 'kernel', 'webscraper', '{}', gen_random_uuid(), 'test', now(), now())`);
      return { data_connector_id: id };
    case 'integration_deliveries':
      await insert(`INSERT INTO integrations (integration_id, organization_id, name, type, config, created_by, created_at, updated_at)
                    VALUES ($1, $2, 'kernel', 'webhook', '{}', 'test', now(), now())`);
      return { integration_id: id };
    default:
      throw new Error(`no parent for ${kind.table}`);
  }
}

/** The columns every row of the kind needs besides its id, parent, organization and status. */
const REQUIRED: Record<string, Row> = {
  runs: { kind: 'structure', created_by: 'test' },
  deployments: { code_source: '{}', created_by: 'test' },
  knowledge_base_jobs: { created_by: 'test', created_at: new Date(), updated_at: new Date() },
  data_jobs: { created_by: 'test', created_at: new Date(), updated_at: new Date() },
  integration_deliveries: { received_at: new Date(), verdict: 'accepted', http_status: 202, updated_at: new Date() },
};

/**
 * Inserts a job of `kind` in `status` for organization `org` (with `fields` besides, JSON values given as
 * objects); answers its id. `db`: an open transaction, to insert a row that is not committed yet.
 */
export async function insertJob(
  db: DataSource | EntityManager,
  kind: JobKind,
  org: string,
  status = kind.open[0],
  fields: Row = {},
): Promise<string> {
  const id = randomUUID();
  const columns: Row = {
    [kind.idColumn]: id,
    organization_id: org,
    status,
    ...(await parentOf(db, kind, org)),
    ...REQUIRED[kind.table],
    ...fields,
  };
  const names = Object.keys(columns);
  const values = Object.values(columns).map((v) =>
    v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v,
  );
  await db.query(
    `INSERT INTO ${kind.table} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
  return id;
}

/** The row of job `id` as the table has it. */
export async function jobRow(db: DataSource | EntityManager, kind: JobKind, id: string): Promise<Row | undefined> {
  return ((await db.query(`SELECT * FROM ${kind.table} WHERE ${kind.idColumn} = $1`, [id])) as Row[])[0];
}

/** Makes job `id` look untouched for `seconds` (the reconciler examines only such rows). */
export const backdate = (ds: DataSource, kind: JobKind, id: string, seconds: number) =>
  ds.query(`UPDATE ${kind.table} SET updated_at = now() - make_interval(secs => $2) WHERE ${kind.idColumn} = $1`, [
    id,
    seconds,
  ]);

/** A migrated database of the test file's own with an organization in it (a `before` hook's). */
export async function databaseWithOrganization(): Promise<{ db: TestDatabase; org: string }> {
  const db = await migratedDatabase();
  return { db, org: await newOrganization(db.ds) };
}

/** Removes what databaseWithOrganization made (an `after` hook's; either may be missing after a failed start). */
export async function dropDatabaseWithOrganization(db: TestDatabase | undefined, org: string | undefined) {
  if (db && org) await removeOrganization(db.ds, org);
  await db?.stop();
}

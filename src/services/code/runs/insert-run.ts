// The insert of a run the api creates by a resource's id (a structure run, a function's run or execute): the
// resource in the caller's organization, its latest SUCCEEDED deployment and the new QUEUED row in ONE
// statement, instead of a read of each and then the INSERT (three round trips per create, and the api's
// CPU per create in the burst: bench/RESULTS.md, "create-path"). All three see one snapshot, so no other
// deployment can be recorded between the reads and the insert. Inserting nothing is a 404 (no such resource in
// the organization) or a 409 (no successful deployment), said after one more read: only on that error path.
import type { DataSource, EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { conflict, notFound } from '../../../errors';
import { Run } from '../../../persistence/entities';
import type { CodeResourceKind } from '../../../persistence/entities/code-resource';
import { hydrateRow, queryPrepared } from '../../../persistence/direct-sql';
import type { RetryPolicy } from '../../../temporal/retry-policy';
import { KIND_LABEL } from '../code-resources';

/** Columns the statement takes from the resource and its deployment instead of the row given. */
const FROM_RESOURCE = ['deployment_id', 'retry_policy'];

/** The statement's text per data source and set of columns given (built once: the shape of a run row is fixed). */
const texts = new WeakMap<DataSource, Map<string, string>>();

function textOf(ds: DataSource, columns: ColumnMetadata[]): string {
  let byColumns = texts.get(ds);
  if (!byColumns) texts.set(ds, (byColumns = new Map()));
  const key = columns.map((c) => c.databaseName).join(',');
  let text = byColumns.get(key);
  if (!text) {
    const driver = ds.driver as PostgresDriver;
    // $1 resource, $2 kind, $3 organization, $4 "the resource's retry policy", $5 the request's; then the row.
    const values = columns.map((c, i) => `$${i + 6}::${driver.normalizeType(c)}`);
    text = `WITH resource AS (
        SELECT resource_id, name, retry_policy FROM code_resources
         WHERE resource_id = $1 AND kind = $2 AND organization_id = $3
      ), deployment AS (
        SELECT deployment_id FROM deployments
         WHERE resource_id = $1 AND status = 'SUCCEEDED'
         ORDER BY created_at DESC, deployment_id DESC LIMIT 1
      ), inserted AS (
        INSERT INTO runs (${[...columns.map((c) => `"${c.databaseName}"`), ...FROM_RESOURCE].join(', ')})
        SELECT ${values.join(', ')}, deployment.deployment_id,
               CASE WHEN $4::boolean THEN resource.retry_policy ELSE $5::jsonb END
          FROM resource, deployment
        RETURNING *
      )
      SELECT inserted.*, resource.name AS resource_name FROM inserted, resource`;
    byColumns.set(key, text);
  }
  return text;
}

/**
 * Inserts `row` (a new QUEUED run of `kind` whose resource_id names the resource) on the resource's latest
 * SUCCEEDED deployment, with `retryPolicy` (undefined: the resource's; null: none), in `em` (its transaction
 * when an idempotency key is claimed with it). Answers the run as stored and the resource's name.
 */
export async function insertRunOfLatestDeployment(
  em: EntityManager,
  kind: CodeResourceKind,
  row: Run,
  retryPolicy: RetryPolicy | null | undefined,
): Promise<{ run: Run; resourceName: string }> {
  const ds = em.connection;
  const driver = ds.driver as PostgresDriver;
  const columns = ds
    .getMetadata(Run)
    .columns.filter((c) => !FROM_RESOURCE.includes(c.databaseName) && c.getEntityValue(row) !== undefined);
  const [inserted]: Array<Record<string, unknown>> = await queryPrepared(em, textOf(ds, columns), [
    row.resource_id,
    kind,
    row.organization_id,
    retryPolicy === undefined,
    retryPolicy == null ? null : JSON.stringify(retryPolicy),
    ...columns.map((c) => driver.preparePersistentValue(c.getEntityValue(row), c)),
  ]);
  if (inserted) return { run: hydrateRow(ds, Run, inserted), resourceName: inserted.resource_name as string };
  const [resource]: unknown[] = await em.query(
    `SELECT 1 FROM code_resources WHERE resource_id = $1 AND kind = $2 AND organization_id = $3`,
    [row.resource_id, kind, row.organization_id],
  );
  if (!resource) throw notFound(KIND_LABEL[kind]);
  throw conflict(
    `The ${kind} ${row.resource_id} has no successful deployment yet: deploy it and wait for status SUCCEEDED first`,
  );
}

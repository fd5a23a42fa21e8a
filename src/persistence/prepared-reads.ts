// The hot reads by key (a record by id in the caller's organization, a run of a worker's activity): one named,
// prepared statement per entity and set of key columns, sent straight to the pool. TypeORM's `findOneBy`
// builds and escapes the same SELECT anew on every call and hydrates through its query builder, which was
// 12-15 % of the api's CPU on the read path (bench/RESULTS.md). Values are hydrated exactly as TypeORM does
// (the driver's `prepareHydratedValue`: dates, enums, transformers), so callers see the same entity.
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

type KeyValue = string | number | boolean;

interface Statement {
  name: string;
  text: string;
  keys: string[];
  metadata: EntityMetadata;
}

const statements = new WeakMap<DataSource, Map<string, Statement>>();

function statementFor(ds: DataSource, entity: EntityTarget<ObjectLiteral>, keys: string[]): Statement {
  let byDs = statements.get(ds);
  if (!byDs) statements.set(ds, (byDs = new Map()));
  const metadata = ds.getMetadata(entity);
  const cacheKey = `${metadata.tableName}:${keys.join(',')}`;
  let statement = byDs.get(cacheKey);
  if (!statement) {
    const columns = metadata.columns.map((c) => `"${c.databaseName}"`).join(', ');
    const where = keys
      .map((key, i) => {
        const column = metadata.findColumnWithPropertyPath(key);
        if (!column) throw new Error(`${metadata.tableName} has no column ${key}`);
        return `"${column.databaseName}" = $${i + 1}`;
      })
      .join(' AND ');
    const text = `SELECT ${columns} FROM "${metadata.tableName}" WHERE ${where} LIMIT 1`;
    // A statement's name must always denote one text: the name is derived from it.
    const name = `by_key_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    byDs.set(cacheKey, (statement = { name, text, keys, metadata }));
  }
  return statement;
}

/**
 * The one row of `entity` whose columns equal `where` (property names, equality only), hydrated as TypeORM
 * hydrates it, or null. Not for reads inside a transaction: it takes its own pool connection.
 */
export async function findOnePrepared<T extends ObjectLiteral>(
  ds: DataSource,
  entity: EntityTarget<T>,
  where: Partial<Record<keyof T & string, KeyValue>>,
): Promise<T | null> {
  const keys = Object.keys(where).sort();
  const statement = statementFor(ds, entity as EntityTarget<ObjectLiteral>, keys);
  const driver = ds.driver as PostgresDriver;
  const pool = driver.master as Pool;
  const { rows } = await pool.query({
    name: statement.name,
    text: statement.text,
    values: keys.map((k) => (where as Record<string, KeyValue>)[k]),
  });
  const row = rows[0] as Record<string, unknown> | undefined;
  if (!row) return null;
  const record = statement.metadata.create() as T;
  for (const column of statement.metadata.columns)
    column.setEntityValue(record, driver.prepareHydratedValue(row[column.databaseName], column));
  return record;
}

// The hot statements, straight to the driver: a record by key (a record by id in the caller's organization, a
// run of a worker's activity, a resource's newest deployment) as one named, prepared statement per entity,
// key set and order; a new row as one INSERT; and the statements of every run's path written as SQL (the guarded
// transition, the feed, admission: queryPrepared), each prepared once per connection. TypeORM's `findOneBy` and `save` build and escape the same SQL
// anew on every call and hydrate through the query builder (12-15 % of the api's CPU on the read path,
// bench/RESULTS.md), and `save` first SELECTs the row it is about to insert. Values go through the driver
// both ways as TypeORM sends and hydrates them (dates, jsonb, enums, transformers), so callers see the
// same entity.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResult } from 'pg';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { DataSource, EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

type KeyValue = string | number | boolean;

interface Statement {
  name: string;
  text: string;
  metadata: EntityMetadata;
  /** The columns of the parameters, in order. */
  params: ColumnMetadata[];
  /**
   * `{ name, text }` as the prototype of each call's query config: pg copies a config's own properties on
   * every query (`Object.getOwnPropertyDescriptors`, 3 % of the api's CPU on the read path), and then
   * inherits these two instead of copying them.
   */
  config: { name: string; text: string };
}

const statements = new WeakMap<DataSource, Map<string, Statement>>();

function columnOf(metadata: EntityMetadata, property: string): ColumnMetadata {
  const column = metadata.findColumnWithPropertyPath(property);
  if (!column) throw new Error(`${metadata.tableName} has no column ${property}`);
  return column;
}

/** A statement's name always denotes one text (pg refuses to re-prepare a name): it is derived from it. */
const nameOf = (text: string) => `direct_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;

function cached(ds: DataSource, key: string, build: () => Omit<Statement, 'name' | 'config'>): Statement {
  let byDs = statements.get(ds);
  if (!byDs) statements.set(ds, (byDs = new Map()));
  let statement = byDs.get(key);
  if (!statement) {
    const built = build();
    const name = nameOf(built.text);
    byDs.set(key, (statement = { ...built, name, config: { name, text: built.text } }));
  }
  return statement;
}

/** Statement names by text, for queryPrepared (its texts come from code: a bounded set). */
const preparedNames = new Map<string, string>();

/**
 * Whether a statement answers every column of a table (`SELECT *`, `RETURNING *`, `moved.*`; not the columns of
 * an `unnest`): prepared, it would fail with "cached plan must not change result type" on every connection that
 * prepared it before a migration added a column, as an older build's processes do through a rolling upgrade's
 * expand step (the upgrade drill). Such a statement runs unnamed, planned anew each time.
 */
const answersAllColumns = (text: string) => /\bRETURNING\s+\*|\w\.\*|\bSELECT\s+\*(?!\s+FROM\s+unnest\b)/i.test(text);
/** Past this many texts, a new one runs unnamed: a text built from values by mistake must not fill memory. */
const MAX_PREPARED_TEXTS = 2_000;

/**
 * `text` with `values`, as `db.query` runs it (in `db`'s transaction when it is the EntityManager of one; the same
 * answer: rows, or [rows, count] for an UPDATE or DELETE), but as a named statement: PostgreSQL parses and plans
 * it once per connection instead of at every call (about 2 ms of its CPU per run over a run's statements,
 * bench/RESULTS.md). For statements whose text is fixed by code, values always as parameters; one that answers every
 * column of a table runs unnamed (answersAllColumns).
 */
export async function queryPrepared<T = any>(
  db: DataSource | EntityManager,
  text: string,
  values: unknown[] = [],
): Promise<T> {
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED_TEXTS && !answersAllColumns(text))
    preparedNames.set(text, (name = nameOf(text)));
  const config = name === undefined ? { text, values } : { name, text, values };
  // TypeORM's own mark of an EntityManager (InstanceChecker), whichever copy of the package made it.
  const manager = (db as { '@instanceof'?: symbol })['@instanceof'] === Symbol.for('EntityManager');
  const runner = manager ? (db as EntityManager).queryRunner : undefined;
  const ds = manager ? (db as EntityManager).connection : (db as DataSource);
  const result: QueryResult =
    runner && !runner.isReleased
      ? await ((await runner.connect()) as PoolClient).query(config)
      : await ((ds.driver as PostgresDriver).master as Pool).query(config);
  return (
    result.command === 'UPDATE' || result.command === 'DELETE' ? [result.rows, result.rowCount] : result.rows
  ) as T;
}

/** A row of `entity` as pg answered it (`RETURNING *`, a SELECT of its columns), hydrated as TypeORM does. */
export function hydrateRow<T extends ObjectLiteral>(
  ds: DataSource,
  entity: EntityTarget<T>,
  row: Record<string, unknown>,
): T {
  return hydrate<T>(ds.driver as PostgresDriver, ds.getMetadata(entity), row);
}

function hydrate<T>(driver: PostgresDriver, metadata: EntityMetadata, row: Record<string, unknown>): T {
  const record = metadata.create() as T;
  for (const column of metadata.columns)
    column.setEntityValue(record as ObjectLiteral, driver.prepareHydratedValue(row[column.databaseName], column));
  return record;
}

/**
 * The row of `entity` whose columns equal `where` (property names; equality, or IS NULL for null), the first
 * by `order` if several match, hydrated as TypeORM hydrates it; or null. Not for reads inside a transaction:
 * it takes a connection of its own from the pool.
 */
export async function findOnePrepared<T extends ObjectLiteral>(
  ds: DataSource,
  entity: EntityTarget<T>,
  where: Partial<Record<keyof T & string, KeyValue | null>>,
  order?: Partial<Record<keyof T & string, 'ASC' | 'DESC'>>,
): Promise<T | null> {
  const metadata = ds.getMetadata(entity);
  const values = where as Record<string, KeyValue | null | undefined>;
  // As findOneBy: an undefined member is no condition; null is IS NULL (the statement differs, not a value).
  const keys = Object.keys(values)
    .filter((k) => values[k] !== undefined && values[k] !== null)
    .sort();
  const nulls = Object.keys(values)
    .filter((k) => values[k] === null)
    .sort();
  if (!keys.length && !nulls.length) throw new Error(`a read of ${metadata.tableName} by key names no key`);
  const orderBy = Object.entries(order ?? {}) as Array<[string, 'ASC' | 'DESC']>;
  const statement = cached(ds, `one:${metadata.tableName}:${keys}:${nulls}:${orderBy.join(',')}`, () => {
    const params = keys.map((key) => columnOf(metadata, key));
    const columns = metadata.columns.map((c) => `"${c.databaseName}"`).join(', ');
    const conditions = [
      ...params.map((c, i) => `"${c.databaseName}" = $${i + 1}`),
      ...nulls.map((key) => `"${columnOf(metadata, key).databaseName}" IS NULL`),
    ].join(' AND ');
    const sort = orderBy.map(([key, dir]) => `"${columnOf(metadata, key).databaseName}" ${dir}`).join(', ');
    return {
      text: `SELECT ${columns} FROM "${metadata.tableName}" WHERE ${conditions}${sort ? ` ORDER BY ${sort}` : ''} LIMIT 1`,
      metadata,
      params,
    };
  });
  const driver = ds.driver as PostgresDriver;
  const config = Object.create(statement.config) as { name: string; text: string; values: KeyValue[] };
  config.values = keys.map((k) => values[k] as KeyValue);
  const { rows } = await (driver.master as Pool).query(config);
  return rows[0] ? hydrate<T>(driver, metadata, rows[0] as Record<string, unknown>) : null;
}

/** A record read along with another's (`findJoinedPrepared`): the one of `entity` whose `key` equals the other's `by`. */
export interface JoinedBy<T extends ObjectLiteral> {
  entity: EntityTarget<T>;
  /** A property of the joined entity (its primary key, so that at most one record matches). */
  key: keyof T & string;
  /** The property of the record read whose value the joined record's `key` has. */
  by: string;
}

/**
 * The record of `entity` whose columns equal `where` (property names, values not null), with the records
 * `joins` names (each null when there is none): one statement instead of a read of each in turn. Each is
 * hydrated as TypeORM hydrates it. Not for reads inside a transaction (a connection of its own).
 */
export async function findJoinedPrepared<T extends ObjectLiteral, J extends Record<string, ObjectLiteral>>(
  ds: DataSource,
  entity: EntityTarget<T>,
  where: Partial<Record<keyof T & string, KeyValue>>,
  joins: { [K in keyof J]: JoinedBy<J[K]> },
): Promise<{ record: T; joined: { [K in keyof J]: J[K] | null } } | null> {
  const metadata = ds.getMetadata(entity);
  const values = where as Record<string, KeyValue>;
  const keys = Object.keys(values).sort();
  if (!keys.length || keys.some((k) => values[k] === undefined || values[k] === null))
    throw new Error(`a joined read of ${metadata.tableName} names no key, or a null one`);
  const names = Object.keys(joins).sort();
  const joined = names.map((name) => {
    const join = joins[name] as JoinedBy<ObjectLiteral>;
    const target = ds.getMetadata(join.entity);
    return { name, metadata: target, key: columnOf(target, join.key), by: columnOf(metadata, join.by) };
  });
  const signature = joined.map((j) => `${j.name}=${j.metadata.tableName}.${j.key.databaseName}:${j.by.databaseName}`);
  const statement = cached(ds, `joined:${metadata.tableName}:${keys}:${signature}`, () => {
    // Each table's columns under an alias of its own: "<n>.<column>" (t0 the record's, t1... the joined ones').
    const columnsOf = (m: EntityMetadata, n: number) =>
      m.columns.map((c) => `t${n}."${c.databaseName}" AS "${n}.${c.databaseName}"`);
    const params = keys.map((key) => columnOf(metadata, key));
    return {
      text:
        `SELECT ${[metadata, ...joined.map((j) => j.metadata)].flatMap(columnsOf).join(', ')} ` +
        `FROM "${metadata.tableName}" t0 ` +
        joined
          .map(
            (j, i) =>
              `LEFT JOIN "${j.metadata.tableName}" t${i + 1} ` +
              `ON t${i + 1}."${j.key.databaseName}" = t0."${j.by.databaseName}" `,
          )
          .join('') +
        `WHERE ${params.map((c, i) => `t0."${c.databaseName}" = $${i + 1}`).join(' AND ')} LIMIT 1`,
      metadata,
      params,
    };
  });
  const driver = ds.driver as PostgresDriver;
  const config = Object.create(statement.config) as { name: string; text: string; values: KeyValue[] };
  config.values = keys.map((k) => values[k]);
  const { rows } = await (driver.master as Pool).query(config);
  const row = rows[0] as Record<string, unknown> | undefined;
  if (!row) return null;
  const part = (m: EntityMetadata, n: number) =>
    Object.fromEntries(m.columns.map((c) => [c.databaseName, row[`${n}.${c.databaseName}`]]));
  const others = Object.fromEntries(
    joined.map((j, i) => [
      j.name,
      // No record joined: its key is null (a key column is never null in a stored row).
      row[`${i + 1}.${j.key.databaseName}`] === null ? null : hydrate(driver, j.metadata, part(j.metadata, i + 1)),
    ]),
  ) as { [K in keyof J]: J[K] | null };
  return { record: hydrate<T>(driver, metadata, part(metadata, 0)), joined: others };
}

/**
 * Inserts `record` (every column it has a value for; the others take their defaults) as one INSERT in `em`'s
 * transaction, and answers the row as stored.
 */
export async function insertRow<T extends ObjectLiteral>(
  em: EntityManager,
  entity: EntityTarget<T>,
  record: T,
): Promise<T> {
  const ds = em.connection;
  const metadata = ds.getMetadata(entity);
  const present = metadata.columns.filter((c) => c.getEntityValue(record) !== undefined);
  const statement = cached(ds, `insert:${metadata.tableName}:${present.map((c) => c.databaseName).join(',')}`, () => ({
    text:
      `INSERT INTO "${metadata.tableName}" (${present.map((c) => `"${c.databaseName}"`).join(', ')}) ` +
      `VALUES (${present.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *`,
    metadata,
    params: present,
  }));
  const driver = ds.driver as PostgresDriver;
  const rows: Array<Record<string, unknown>> = await queryPrepared(
    em,
    statement.text,
    statement.params.map((c) => driver.preparePersistentValue(c.getEntityValue(record), c)),
  );
  return hydrate<T>(driver, metadata, rows[0]);
}

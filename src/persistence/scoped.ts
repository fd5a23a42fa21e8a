// Reads scoped to the caller's organization: another organization's record is "not found", never visible.
import { DataSource, EntityTarget, FindOptionsOrder, FindOptionsWhere, ObjectLiteral } from 'typeorm';
import { missingReferences, notFound } from '../errors';
import { findOnePrepared } from './direct-sql';
import { PageRequest, paginate, Pagination, skipTake } from './pagination';

type OrgOwned = ObjectLiteral & { organization_id: string };

export async function findInOrg<T extends OrgOwned>(
  ds: DataSource,
  entity: EntityTarget<T>,
  organizationId: string,
  where: Partial<Record<keyof T & string, string | number | boolean | null>>,
  what: string,
): Promise<T> {
  const row = await findOnePrepared(ds, entity, { ...where, organization_id: organizationId });
  if (!row) throw notFound(what);
  return row;
}

export async function pageInOrg<T extends OrgOwned>(
  ds: DataSource,
  entity: EntityTarget<T>,
  organizationId: string,
  page: PageRequest,
  /** A list means any of them (OR), each within the organization. */
  where: FindOptionsWhere<T> | FindOptionsWhere<T>[] = {},
  order: FindOptionsOrder<T> = { created_at: 'DESC' } as unknown as FindOptionsOrder<T>,
): Promise<{ items: T[]; pagination: Pagination }> {
  const [items, total] = await ds.getRepository(entity).findAndCount({
    where: (Array.isArray(where) ? where : [where]).map(
      (w) => ({ ...w, organization_id: organizationId }) as FindOptionsWhere<T>,
    ),
    order,
    ...skipTake(page),
  });
  return { items, pagination: paginate(page, total) };
}

export const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** Tables whose records other records name by id lists (an assistant's ruleset_ids, tool_ids, ...). */
const REFERENCEABLE = {
  ruleset: { table: 'rulesets', idColumn: 'ruleset_id', kind: undefined, label: 'Ruleset' },
  structure: { table: 'code_resources', idColumn: 'resource_id', kind: 'structure', label: 'Structure' },
  tool: { table: 'code_resources', idColumn: 'resource_id', kind: 'tool', label: 'Tool' },
  secret: { table: 'secrets', idColumn: 'secret_id', kind: undefined, label: 'Secret' },
  thread: { table: 'threads', idColumn: 'thread_id', kind: undefined, label: 'Thread' },
  bucket: { table: 'buckets', idColumn: 'bucket_id', kind: undefined, label: 'Bucket' },
  connection: { table: 'connections', idColumn: 'connection_id', kind: undefined, label: 'Connection' },
  assistant: { table: 'assistants', idColumn: 'assistant_id', kind: undefined, label: 'Assistant' },
  knowledge_base: { table: 'knowledge_bases', idColumn: 'knowledge_base_id', kind: undefined, label: 'Knowledge base' },
  retriever: { table: 'retrievers', idColumn: 'retriever_id', kind: undefined, label: 'Retriever' },
  retriever_component: {
    table: 'retriever_components',
    idColumn: 'retriever_component_id',
    kind: undefined,
    label: 'Retriever component',
  },
} as const;

/**
 * Checks that every id names a record of the organization; otherwise 409 ConflictError (missingReferences)
 * naming the missing ids, with `path` pointing at the list in the request.
 */
export async function assertIdsInOrg(
  ds: DataSource,
  what: keyof typeof REFERENCEABLE,
  organizationId: string,
  ids: string[],
  path: string,
): Promise<void> {
  if (!ids.length) return;
  const t = REFERENCEABLE[what];
  const rows: Array<{ id: string }> = await ds.query(
    `SELECT ${t.idColumn} AS id FROM ${t.table} WHERE ${t.idColumn} = ANY($1::uuid[]) AND organization_id = $2${t.kind ? ` AND kind = '${t.kind}'` : ''}`,
    [ids, organizationId],
  );
  const found = new Set(rows.map((r) => r.id));
  const missing = [...new Set(ids)].filter((id) => !found.has(id));
  if (missing.length) {
    throw missingReferences([
      { message: `${t.label}${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`, path },
    ]);
  }
}

/** Every `secret_ref` env var (the schema makes its value a uuid) must name a secret of the organization. */
export async function assertSecretRefs(
  ds: DataSource,
  organizationId: string,
  envVars: Array<{ value: string; source?: string }>,
  path: string,
): Promise<void> {
  for (const [i, v] of envVars.entries()) {
    if (v.source?.toLowerCase() === 'secret_ref')
      await assertIdsInOrg(ds, 'secret', organizationId, [v.value], `${path}/${i}/value`);
  }
}

/** `text` as a literal inside a LIKE pattern (with ESCAPE '\\'). */
export const likeEscape = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

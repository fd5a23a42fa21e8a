// Retrievers: a name and components — knowledge bases to retrieve from (`knowledge_base`, fused by
// reciprocal rank fusion) and reranking steps (`model_rerank`) — queried through workflow
// `retriever-query-<uuid>` (the api calls no model). Every knowledge base a component names must be one of the
// caller's organization (409 naming it, like every id a body refers to). Component schema (one per type, in
// the route): docs/knowledge-bases.md#retrievers. Component names need not be unique: query args given for a
// name apply to every knowledge_base component of that name.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { ModelDriver } from '../../../drivers/model/types';
import type { Caller } from '../../caller';
import type { Config } from '../../../config';
import { badRequest, conflict, notFound } from '../../../errors';
import type { PageRequest } from '../../../persistence/pagination';
import {
  KnowledgeBaseComponentConfig,
  RerankComponentConfig,
  Retriever,
  RetrieverComponent,
  RetrieverQuery,
} from '../../../persistence/entities/retrieval';
import { assertIdsInOrg, findInOrg, iso, pageInOrg } from '../../../persistence/scoped';
import { workflowStart, type RetrieverQueryInput } from '../../../temporal/contracts';
import { awaitRetrieval } from './run-query';
import { assertDefaultModel } from './search';
import { goneMessage, queryRetriever, type ComponentQueryArgs, type RetrievalStores } from './retrieve';
import { assertComponentRefs, componentsOfRetriever, shapeConfig, type ComponentInput } from './retriever-components';
import { forgetDeleted } from '../../../persistence/references';

/** The most components a retriever has, inline and standalone together. */
export const MAX_RETRIEVER_COMPONENTS = 20;

export interface RetrieverFields {
  name?: string;
  description?: string;
  retriever_components?: ComponentInput[];
  /** Standalone components (/retriever-components) of the organization, queried after the inline ones. */
  retriever_component_ids?: string[];
}

/**
 * Shapes the inline components (the route's schema checked each against its type) and checks their knowledge
 * bases. `previous` keeps the ids (and created_at) of components kept by name and type.
 */
async function componentsOf(
  ds: DataSource,
  caller: Caller,
  inputs: ComponentInput[],
  previous: RetrieverComponent[] = [],
): Promise<RetrieverComponent[]> {
  const now = new Date().toISOString();
  const unclaimed = [...previous];
  const components = inputs.map((c): RetrieverComponent => {
    const kept = unclaimed.find((p) => p.name === c.name && p.type === c.type);
    if (kept) unclaimed.splice(unclaimed.indexOf(kept), 1);
    return {
      retriever_component_id: kept?.retriever_component_id ?? randomUUID(),
      name: c.name,
      ...(c.description !== undefined ? { description: c.description } : {}),
      type: c.type,
      config: shapeConfig(c.type, c.config),
      created_by: kept?.created_by ?? caller.actor,
      created_at: kept?.created_at ?? now,
      updated_at: now,
    };
  });
  for (const [i, c] of components.entries())
    await assertComponentRefs(ds, caller, c, `/body/retriever_components/${i}`);
  return components;
}

/** The standalone component ids, lower-cased and without repeats, each one of the organization (409 otherwise). */
async function componentIdsOf(ds: DataSource, caller: Caller, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  await assertIdsInOrg(ds, 'retriever_component', caller.organizationId, unique, '/body/retriever_component_ids');
  return unique;
}

/** At most MAX_RETRIEVER_COMPONENTS components in all, inline and standalone (400 otherwise). */
function assertComponentCount(r: Pick<Retriever, 'components' | 'component_ids'>): void {
  const count = r.components.length + r.component_ids.length;
  if (count > MAX_RETRIEVER_COMPONENTS)
    throw badRequest(
      `A retriever has at most ${MAX_RETRIEVER_COMPONENTS} components (retriever_components and retriever_component_ids together); this one would have ${count}`,
    );
}

export const findRetriever = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, Retriever, caller.organizationId, { retriever_id: id }, 'Retriever');

export const listRetrievers = (ds: DataSource, caller: Caller, page: PageRequest) =>
  pageInOrg(ds, Retriever, caller.organizationId, page, {}, { created_at: 'DESC', retriever_id: 'DESC' });

export async function createRetriever(
  ds: DataSource,
  caller: Caller,
  fields: RetrieverFields & { name: string },
): Promise<Retriever> {
  const now = new Date();
  const retriever: Retriever = {
    retriever_id: randomUUID(),
    organization_id: caller.organizationId,
    name: fields.name,
    description: fields.description ?? null,
    components: await componentsOf(ds, caller, fields.retriever_components ?? []),
    component_ids: await componentIdsOf(ds, caller, fields.retriever_component_ids ?? []),
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  assertComponentCount(retriever);
  return ds.getRepository(Retriever).save(retriever);
}

/**
 * Changes the given fields; given inline components replace the stored ones (a component kept by name keeps
 * its id), given retriever_component_ids the named ones.
 */
export async function updateRetriever(ds: DataSource, caller: Caller, id: string, fields: RetrieverFields) {
  const retriever = await findRetriever(ds, caller, id);
  if (fields.name !== undefined) retriever.name = fields.name;
  if (fields.description !== undefined) retriever.description = fields.description;
  if (fields.retriever_components !== undefined)
    retriever.components = await componentsOf(ds, caller, fields.retriever_components, retriever.components);
  if (fields.retriever_component_ids !== undefined)
    retriever.component_ids = await componentIdsOf(ds, caller, fields.retriever_component_ids);
  assertComponentCount(retriever);
  retriever.updated_at = new Date();
  return ds.getRepository(Retriever).save(retriever);
}

/** Deletes the retriever; the assistants that name it no longer do (same transaction). */
export async function deleteRetriever(ds: DataSource, caller: Caller, id: string): Promise<void> {
  const retriever = await findRetriever(ds, caller, id);
  await ds.transaction(async (em) => {
    await forgetDeleted(em, 'retriever', retriever.organization_id, retriever.retriever_id);
    await em.getRepository(Retriever).delete({ retriever_id: retriever.retriever_id });
  });
}

/** The JSON Schema of `retriever_components_query_args` for this retriever: per knowledge_base component name. */
export function componentsQuerySchema(components: RetrieverComponent[]) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      components
        .filter((c) => c.type === 'knowledge_base')
        .map((c) => [
          c.name,
          {
            type: 'object',
            additionalProperties: false,
            properties: {
              count: { type: 'integer', minimum: 1, maximum: 100 },
              filter: { type: 'object', description: 'Entries whose meta holds every member.' },
            },
          },
        ]),
    ),
  };
}

/** A knowledge base component whose knowledge base was deleted since is a 409 naming it (never skipped). */
async function assertComponentsExist(
  ds: DataSource,
  organizationId: string,
  components: RetrieverComponent[],
): Promise<void> {
  const named = components.filter((c) => c.type === 'knowledge_base');
  const ids = named.map((c) => (c.config as KnowledgeBaseComponentConfig).knowledge_base_id);
  if (!ids.length) return;
  const rows: Array<{ id: string }> = await ds.query(
    `SELECT knowledge_base_id AS id FROM knowledge_bases WHERE knowledge_base_id = ANY($1::uuid[]) AND organization_id = $2`,
    [ids, organizationId],
  );
  const found = new Set(rows.map((r) => r.id));
  const gone = named.filter((c) => !found.has((c.config as KnowledgeBaseComponentConfig).knowledge_base_id));
  if (gone.length)
    throw conflict(
      gone.map((c) => goneMessage((c.config as KnowledgeBaseComponentConfig).knowledge_base_id, c.name)).join('; ') +
        ': remove the component or point it at another knowledge base',
    );
}

export async function queryRetrieverRequest(
  deps: { ds: DataSource; temporal: Client; config: Config },
  caller: Caller,
  retrieverId: string,
  body: { query: string; retriever_components_query_args?: ComponentQueryArgs },
): Promise<RetrieverQuery> {
  const retriever = await findRetriever(deps.ds, caller, retrieverId);
  const components = await componentsOfRetriever(deps.ds, retriever);
  const componentArgs = body.retriever_components_query_args ?? {};
  // Which names exist is the stored retriever's business: a name it lacks conflicts with it (409).
  const unknown = Object.keys(componentArgs).filter(
    (name) => !components.some((c) => c.name === name && c.type === 'knowledge_base'),
  );
  if (unknown.length)
    throw conflict(`The retriever has no knowledge_base component named ${unknown.map((n) => `"${n}"`).join(', ')}`);
  await assertComponentsExist(deps.ds, retriever.organization_id, components);
  if (components.some((c) => c.type === 'model_rerank' && !(c.config as RerankComponentConfig).model))
    assertDefaultModel(deps.config, 'Reranking (a model_rerank component without a model)');
  const retrieverQueryId = randomUUID();
  await awaitRetrieval(deps, {
    resource: {
      kind: 'retriever-query',
      id: retrieverQueryId,
      organizationId: caller.organizationId,
      summary: `Query of retriever ${retriever.name} (${retriever.retriever_id})`,
    },
    start: workflowStart.retrieverQuery({
      retrieverQueryId,
      retrieverId: retriever.retriever_id,
      organizationId: caller.organizationId,
      createdBy: caller.actor,
      query: body.query,
      componentArgs,
    }),
  });
  const row = await deps.ds.getRepository(RetrieverQuery).findOneBy({ retriever_query_id: retrieverQueryId });
  if (!row) throw notFound('Retriever');
  return row;
}

/**
 * The worker's side of a retriever query: each knowledge base component, fused, reranked when asked; the
 * outputs persisted (idempotent). MISSING when the retriever is gone; model and outside database errors are
 * thrown as they are.
 */
export async function runRetrieverQuery(
  stores: RetrievalStores,
  models: ModelDriver,
  input: RetrieverQueryInput,
  signal: AbortSignal,
): Promise<'DONE' | 'MISSING'> {
  const retriever = await stores.ds.getRepository(Retriever).findOneBy({
    retriever_id: input.retrieverId,
    organization_id: input.organizationId,
  });
  if (!retriever) return 'MISSING';
  const outputs = await queryRetriever(stores, models, retriever, input.query, input.componentArgs, signal);
  await saveRetrieverQuery(stores.ds, {
    retriever_query_id: input.retrieverQueryId,
    retriever_id: retriever.retriever_id,
    organization_id: retriever.organization_id,
    query: input.query,
    query_args: input.componentArgs,
    outputs,
    created_by: input.createdBy,
    created_at: new Date(),
  });
  return 'DONE';
}

async function saveRetrieverQuery(ds: DataSource, row: RetrieverQuery): Promise<void> {
  await ds
    .getRepository(RetrieverQuery)
    .createQueryBuilder()
    .insert()
    .values(row as never)
    .orIgnore()
    .execute();
}

const presentComponent = (r: Retriever, c: RetrieverComponent) => ({
  retriever_component_id: c.retriever_component_id,
  name: c.name,
  ...(c.description !== undefined ? { description: c.description } : {}),
  type: c.type,
  config: c.config,
  organization_id: r.organization_id,
  created_by: c.created_by,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

/** The retriever as the api shows it: every component, inline then standalone (read now). */
export async function presentRetriever(ds: DataSource, r: Retriever) {
  const components = await componentsOfRetriever(ds, r);
  return {
    retriever_id: r.retriever_id,
    name: r.name,
    ...(r.description != null ? { description: r.description } : {}),
    retriever_components: components.map((c) => presentComponent(r, c)),
    retriever_component_ids: r.component_ids,
    retriever_components_schema: componentsQuerySchema(components),
    organization_id: r.organization_id,
    created_by: r.created_by,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

// Retriever components: a knowledge base to retrieve from (`knowledge_base`) or a reranking step
// (`model_rerank`), either inline in a retriever or as their own resource (/retriever-components) that
// retrievers name in `retriever_component_ids`. A retriever reads the standalone ones as they are when it is
// queried or shown, after its inline ones. A standalone component a retriever names cannot be deleted (409
// naming the retrievers): removing it from under them would change their answers silently.
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import type { Caller } from '../../caller';
import { conflict } from '../../../errors';
import type { PageRequest } from '../../../persistence/pagination';
import {
  KnowledgeBaseComponentConfig,
  RerankComponentConfig,
  Retriever,
  RetrieverComponent,
  StandaloneRetrieverComponent,
} from '../../../persistence/entities/retrieval';
import { assertIdsInOrg, findInOrg, iso, pageInOrg } from '../../../persistence/scoped';

export interface ComponentInput {
  name: string;
  type: RetrieverComponent['type'];
  description?: string;
  config?: Record<string, unknown>;
}

/** The stored config of a component of `type` (the route's schema checked `config` against the type). */
export function shapeConfig(
  type: RetrieverComponent['type'],
  config: Record<string, unknown> = {},
): KnowledgeBaseComponentConfig | RerankComponentConfig {
  return type === 'knowledge_base'
    ? {
        knowledge_base_id: String(config.knowledge_base_id).toLowerCase(),
        ...(config.query_args ? { query_args: config.query_args as KnowledgeBaseComponentConfig['query_args'] } : {}),
      }
    : {
        ...(typeof config.model === 'string' ? { model: config.model } : {}),
        ...(typeof config.count === 'number' ? { count: config.count } : {}),
      };
}

/** A knowledge_base component must name a knowledge base of the organization (409 at `path` otherwise). */
export async function assertComponentRefs(
  ds: DataSource,
  caller: Caller,
  component: Pick<RetrieverComponent, 'type' | 'config'>,
  path: string,
): Promise<void> {
  if (component.type !== 'knowledge_base') return;
  const id = (component.config as KnowledgeBaseComponentConfig).knowledge_base_id;
  await assertIdsInOrg(ds, 'knowledge_base', caller.organizationId, [id], `${path}/config/knowledge_base_id`);
}

const asComponent = (c: StandaloneRetrieverComponent): RetrieverComponent => ({
  retriever_component_id: c.retriever_component_id,
  name: c.name,
  ...(c.description != null ? { description: c.description } : {}),
  type: c.type,
  config: c.config,
  created_by: c.created_by,
  created_at: c.created_at.toISOString(),
  updated_at: c.updated_at.toISOString(),
});

/** Every component of `retriever`: its inline ones, then the standalone ones it names, in their order. */
export async function componentsOfRetriever(ds: DataSource, retriever: Retriever): Promise<RetrieverComponent[]> {
  const ids = retriever.component_ids ?? [];
  if (!ids.length) return retriever.components;
  const rows = await ds.getRepository(StandaloneRetrieverComponent).findBy({
    retriever_component_id: In(ids),
    organization_id: retriever.organization_id,
  });
  const byId = new Map(rows.map((r) => [r.retriever_component_id, asComponent(r)]));
  return [...retriever.components, ...ids.flatMap((id) => byId.get(id) ?? [])];
}

export const findRetrieverComponent = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(
    ds,
    StandaloneRetrieverComponent,
    caller.organizationId,
    { retriever_component_id: id },
    'Retriever component',
  );

export const listRetrieverComponents = (ds: DataSource, caller: Caller, page: PageRequest) =>
  pageInOrg(
    ds,
    StandaloneRetrieverComponent,
    caller.organizationId,
    page,
    {},
    {
      created_at: 'DESC',
      retriever_component_id: 'DESC',
    },
  );

export async function createRetrieverComponent(
  ds: DataSource,
  caller: Caller,
  input: ComponentInput,
): Promise<StandaloneRetrieverComponent> {
  const config = shapeConfig(input.type, input.config);
  await assertComponentRefs(ds, caller, { type: input.type, config }, '/body');
  const now = new Date();
  return ds.getRepository(StandaloneRetrieverComponent).save({
    retriever_component_id: randomUUID(),
    organization_id: caller.organizationId,
    name: input.name,
    description: input.description ?? null,
    type: input.type,
    config,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  });
}

/** Changes the given fields; `config` comes with its `type` (the route's schema) and replaces the stored one. */
export async function updateRetrieverComponent(
  ds: DataSource,
  caller: Caller,
  id: string,
  fields: Partial<ComponentInput>,
): Promise<StandaloneRetrieverComponent> {
  const component = await findRetrieverComponent(ds, caller, id);
  if (fields.name !== undefined) component.name = fields.name;
  if (fields.description !== undefined) component.description = fields.description;
  if (fields.type !== undefined) {
    component.type = fields.type;
    component.config = shapeConfig(fields.type, fields.config);
    await assertComponentRefs(ds, caller, component, '/body');
  }
  component.updated_at = new Date();
  return ds.getRepository(StandaloneRetrieverComponent).save(component);
}

export async function deleteRetrieverComponent(ds: DataSource, caller: Caller, id: string): Promise<void> {
  const component = await findRetrieverComponent(ds, caller, id);
  const users: Array<{ retriever_id: string }> = await ds.query(
    `SELECT retriever_id FROM retrievers WHERE organization_id = $1 AND component_ids @> ARRAY[$2::uuid] ORDER BY created_at`,
    [caller.organizationId, component.retriever_component_id],
  );
  if (users.length)
    throw conflict(
      `Retriever component ${component.retriever_component_id} is used by retriever${users.length > 1 ? 's' : ''} ${users.map((u) => u.retriever_id).join(', ')}: remove it from their retriever_component_ids first`,
    );
  await ds
    .getRepository(StandaloneRetrieverComponent)
    .delete({ retriever_component_id: component.retriever_component_id });
}

export const presentRetrieverComponent = (c: StandaloneRetrieverComponent) => ({
  retriever_component_id: c.retriever_component_id,
  name: c.name,
  ...(c.description != null ? { description: c.description } : {}),
  type: c.type,
  config: c.config,
  organization_id: c.organization_id,
  created_by: c.created_by,
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

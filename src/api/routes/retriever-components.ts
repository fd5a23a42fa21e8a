// Retriever components as their own resource: CRUD on /retriever-components. Retrievers name them in
// `retriever_component_ids`; the component schemas here are also the inline ones of a retriever
// (docs/knowledge-bases.md#retrievers).
import {
  createRetrieverComponent,
  deleteRetrieverComponent,
  findRetrieverComponent,
  listRetrieverComponents,
  presentRetrieverComponent,
  updateRetrieverComponent,
} from '../../services/knowledge/retrieval/retriever-components';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'RetrieverComponents';

const filter = {
  type: 'object',
  description: 'Entries whose meta holds every member (values compared as strings).',
} as const;
const count = { type: 'integer', minimum: 1, maximum: 100 } as const;

export const queryArgs = { type: 'object', additionalProperties: false, properties: { count, filter } } as const;
const componentBase = { name: str(1, 200), description: str(0, 200) } as const;

const knowledgeBaseType = {
  const: 'knowledge_base',
  description: 'Retrieves from a knowledge base of the organization.',
} as const;
const knowledgeBaseConfig = {
  type: 'object',
  required: ['knowledge_base_id'],
  additionalProperties: false,
  properties: { knowledge_base_id: uuid, query_args: queryArgs },
} as const;
const rerankType = {
  const: 'model_rerank',
  description: 'The model reorders the fused outputs by relevance.',
} as const;
const rerankConfig = {
  type: 'object',
  additionalProperties: false,
  properties: { model: str(1, 200), count },
} as const;

/** One schema per component type, so that a body the schema accepts is one the service accepts. */
export const ComponentInput = defineSchema('RetrieverComponentInput', {
  oneOf: [
    {
      type: 'object',
      required: ['name', 'type', 'config'],
      additionalProperties: false,
      properties: { ...componentBase, type: knowledgeBaseType, config: knowledgeBaseConfig },
    },
    {
      type: 'object',
      required: ['name', 'type'],
      additionalProperties: false,
      properties: { ...componentBase, type: rerankType, config: rerankConfig },
    },
  ],
});

export const ComponentDetail = {
  type: 'object',
  required: [
    'retriever_component_id',
    'name',
    'type',
    'config',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    retriever_component_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'string' },
    config: { type: 'object' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

const RetrieverComponentSchema = defineSchema('RetrieverComponent', ComponentDetail);

/** A change: name and description alone, or with a type and its config (which replaces the stored one). */
const UpdateBody = defineSchema('UpdateRetrieverComponentRequest', {
  oneOf: [
    {
      type: 'object',
      required: ['type', 'config'],
      additionalProperties: false,
      properties: { ...componentBase, type: knowledgeBaseType, config: knowledgeBaseConfig },
    },
    {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      properties: { ...componentBase, type: rerankType, config: rerankConfig },
    },
    { type: 'object', additionalProperties: false, properties: componentBase },
  ],
});

const idPath = { retriever_component_id: uuid } as const;
const refsNote = 'A knowledge_base component must name a knowledge base of the organization (409 naming it otherwise).';

route({
  operationId: 'ListRetrieverComponents',
  method: 'get',
  path: '/retriever-components',
  tag: TAG,
  paged: true,
  summary: "The organization's standalone retriever components, newest first.",
  responses: {
    200: {
      description: 'Retriever components',
      schema: pageOf('RetrieverComponentList', 'retriever_components', RetrieverComponentSchema),
    },
  },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listRetrieverComponents(deps.ds, caller, page);
    return { status: 200, body: { retriever_components: items.map(presentRetrieverComponent), pagination } };
  },
});

route({
  operationId: 'CreateRetrieverComponent',
  method: 'post',
  path: '/retriever-components',
  tag: TAG,
  summary: `Creates a retriever component that retrievers name in retriever_component_ids. ${refsNote}`,
  body: ComponentInput,
  bodyRequired: true,
  responses: { 201: { description: 'Retriever component', schema: RetrieverComponentSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: presentRetrieverComponent(await createRetrieverComponent(deps.ds, caller, body)),
  }),
});

route({
  operationId: 'GetRetrieverComponent',
  method: 'get',
  path: '/retriever-components/{retriever_component_id}',
  tag: TAG,
  params: idPath,
  summary: 'A retriever component.',
  responses: { 200: { description: 'Retriever component', schema: RetrieverComponentSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentRetrieverComponent(await findRetrieverComponent(deps.ds, caller, params.retriever_component_id)),
  }),
});

route({
  operationId: 'UpdateRetrieverComponent',
  method: 'patch',
  path: '/retriever-components/{retriever_component_id}',
  tag: TAG,
  params: idPath,
  summary: `Changes the given fields; a config comes with its type and replaces the stored one. Retrievers that name the component query it as it now is. ${refsNote}`,
  body: UpdateBody,
  responses: { 200: { description: 'Retriever component', schema: RetrieverComponentSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: presentRetrieverComponent(
      await updateRetrieverComponent(deps.ds, caller, params.retriever_component_id, body),
    ),
  }),
});

route({
  operationId: 'DeleteRetrieverComponent',
  method: 'delete',
  path: '/retriever-components/{retriever_component_id}',
  tag: TAG,
  params: idPath,
  summary: 'Deletes the component; 409 naming the retrievers while any names it in retriever_component_ids.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteRetrieverComponent(deps.ds, caller, params.retriever_component_id);
    return { status: 204 };
  },
});

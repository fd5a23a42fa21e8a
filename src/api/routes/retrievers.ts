// Retrievers: CRUD and query. Components are given inline (`retriever_components`); the standalone
// /retriever-components resource is not served. Schema of a component: docs/knowledge-bases.md#retrievers.
import {
  createRetriever,
  deleteRetriever,
  findRetriever,
  listRetrievers,
  presentRetriever,
  queryRetrieverRequest,
  updateRetriever,
} from '../../services/knowledge/retrievers';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { EntrySchema, MAX_QUERY_CHARS } from './knowledge-bases';

const TAG = 'Retrievers';
const MAX_COMPONENTS = 20;

const filter = { type: 'object', description: 'Entries whose meta holds every member (values compared as strings).' };
const count = { type: 'integer', minimum: 1, maximum: 100 };

const queryArgs = { type: 'object', additionalProperties: false, properties: { count, filter } };
const componentBase = { name: str(1, 200), description: str(0, 200) };

/** One schema per component type, so that a body the schema accepts is one the service accepts. */
const ComponentInput = defineSchema('RetrieverComponentInput', {
  oneOf: [
    {
      type: 'object',
      required: ['name', 'type', 'config'],
      additionalProperties: false,
      properties: {
        ...componentBase,
        type: { const: 'knowledge_base', description: 'Retrieves from a knowledge base of the organization.' },
        config: {
          type: 'object',
          required: ['knowledge_base_id'],
          additionalProperties: false,
          properties: { knowledge_base_id: uuid, query_args: queryArgs },
        },
      },
    },
    {
      type: 'object',
      required: ['name', 'type'],
      additionalProperties: false,
      properties: {
        ...componentBase,
        type: { const: 'model_rerank', description: 'The model reorders the fused outputs by relevance.' },
        config: {
          type: 'object',
          additionalProperties: false,
          properties: { model: str(1, 200), count },
        },
      },
    },
  ],
});

const ComponentDetail = {
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
};

const RetrieverSchema = defineSchema('Retriever', {
  type: 'object',
  required: [
    'retriever_id',
    'name',
    'retriever_components',
    'retriever_components_schema',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    retriever_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    retriever_components: { type: 'array', items: ComponentDetail },
    retriever_components_schema: {
      description: 'JSON Schema of `retriever_components_query_args`: query args per knowledge_base component name.',
    },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const fields = {
  name: str(1, 200),
  description: str(0, 200),
  retriever_components: { type: 'array', maxItems: MAX_COMPONENTS, items: ComponentInput },
  retriever_component_ids: {
    type: 'array',
    maxItems: 0,
    items: uuid,
    description: 'Standalone retriever components are not served: give the components inline; must be empty.',
  },
};
const idPath = { retriever_id: uuid };
const refsNote =
  'Every knowledge_base component must name a knowledge base of the organization (409 naming it otherwise).';

route({
  operationId: 'ListRetrievers',
  method: 'get',
  path: '/retrievers',
  tag: TAG,
  paged: true,
  summary: "The organization's retrievers, newest first.",
  responses: { 200: { description: 'Retrievers', schema: pageOf('RetrieverList', 'retrievers', RetrieverSchema) } },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listRetrievers(deps.ds, caller, page);
    return { status: 200, body: { retrievers: items.map(presentRetriever), pagination } };
  },
});

route({
  operationId: 'CreateRetriever',
  method: 'post',
  path: '/retrievers',
  tag: TAG,
  summary: `Creates a retriever over knowledge bases. ${refsNote}`,
  body: defineSchema('CreateRetrieverRequest', { type: 'object', required: ['name'], properties: fields }),
  bodyRequired: true,
  responses: { 201: { description: 'Retriever', schema: RetrieverSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: presentRetriever(await createRetriever(deps.ds, caller, body)),
  }),
});

route({
  operationId: 'GetRetriever',
  method: 'get',
  path: '/retrievers/{retriever_id}',
  tag: TAG,
  params: idPath,
  summary: 'A retriever with its components.',
  responses: { 200: { description: 'Retriever', schema: RetrieverSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentRetriever(await findRetriever(deps.ds, caller, params.retriever_id)),
  }),
});

route({
  operationId: 'UpdateRetriever',
  method: 'patch',
  path: '/retrievers/{retriever_id}',
  tag: TAG,
  params: idPath,
  summary: `Changes the given fields; given components replace the stored ones. ${refsNote}`,
  body: defineSchema('UpdateRetrieverRequest', { type: 'object', properties: fields }),
  responses: { 200: { description: 'Retriever', schema: RetrieverSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: presentRetriever(await updateRetriever(deps.ds, caller, params.retriever_id, body)),
  }),
});

route({
  operationId: 'DeleteRetriever',
  method: 'delete',
  path: '/retrievers/{retriever_id}',
  tag: TAG,
  params: idPath,
  summary: 'Deletes the retriever (its knowledge bases stay).',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteRetriever(deps.ds, caller, params.retriever_id);
    return { status: 204 };
  },
});

route({
  operationId: 'QueryRetriever',
  method: 'post',
  path: '/retrievers/{retriever_id}/query',
  tag: TAG,
  // griptape's GriptapeCloudVectorStoreDriver queries from inside a structure run, with the run's credential.
  runScoped: true,
  params: idPath,
  summary:
    "Each knowledge_base component's entries for `query`, fused by reciprocal rank fusion, then reordered by each model_rerank component. 503 when a reranking model is needed and not configured, or the provider fails.",
  body: defineSchema('QueryRetrieverRequest', {
    type: 'object',
    required: ['query'],
    properties: {
      query: str(1, MAX_QUERY_CHARS),
      retriever_components_query_args: {
        type: 'object',
        description:
          "Per knowledge_base component name: {count, filter} (the retriever's retriever_components_schema).",
        additionalProperties: queryArgs,
      },
    },
  }),
  bodyRequired: true,
  responses: {
    200: {
      description: 'Outputs, best first',
      schema: defineSchema('RetrieverQueryResult', {
        type: 'object',
        required: ['retriever_query_id', 'outputs'],
        properties: {
          retriever_query_id: uuid,
          outputs: {
            type: 'array',
            items: {
              ...EntrySchema,
              required: [...EntrySchema.required, 'knowledge_base_id', 'retriever_component_id'],
              properties: { ...EntrySchema.properties, knowledge_base_id: uuid, retriever_component_id: uuid },
            },
          },
        },
      }),
    },
  },
  handler: async ({ deps, caller, params, body }) => {
    const row = await queryRetrieverRequest(deps, caller, params.retriever_id, body);
    return { status: 200, body: { retriever_query_id: row.retriever_query_id, outputs: row.outputs } };
  },
});

// Retrievers: CRUD and query. Components are given inline (`retriever_components`) or named by id
// (`retriever_component_ids`, the /retriever-components resource). Schema of a component:
// docs/knowledge-bases.md#retrievers.
import {
  createRetriever,
  deleteRetriever,
  findRetriever,
  listRetrievers,
  MAX_RETRIEVER_COMPONENTS,
  presentRetriever,
  queryRetrieverRequest,
  updateRetriever,
} from '../../services/knowledge/retrieval/retrievers';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { EntrySchema, MAX_QUERY_CHARS } from './knowledge-bases';
import { ComponentDetail, ComponentInput, queryArgs } from './retriever-components';

const TAG = 'Retrievers';

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
    retriever_components: {
      type: 'array',
      items: ComponentDetail,
      description: 'Every component: the inline ones, then those named by retriever_component_ids.',
    },
    retriever_component_ids: {
      type: 'array',
      items: uuid,
      description: 'The standalone components (/retriever-components) the retriever names.',
    },
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
  retriever_components: { type: 'array', maxItems: MAX_RETRIEVER_COMPONENTS, items: ComponentInput },
  retriever_component_ids: {
    type: 'array',
    maxItems: MAX_RETRIEVER_COMPONENTS,
    items: uuid,
    description: `Standalone components (/retriever-components) of the organization, queried after the inline ones; at most ${MAX_RETRIEVER_COMPONENTS} components in all.`,
  },
} as const;
const idPath = { retriever_id: uuid } as const;
const refsNote =
  'Every knowledge_base component must name a knowledge base, and every retriever_component_ids member a retriever component, of the organization (409 naming it otherwise).';

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
    return {
      status: 200,
      body: { retrievers: await Promise.all(items.map((r) => presentRetriever(deps.ds, r))), pagination },
    };
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
    body: await presentRetriever(deps.ds, await createRetriever(deps.ds, caller, body)),
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
    body: await presentRetriever(deps.ds, await findRetriever(deps.ds, caller, params.retriever_id)),
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
    body: await presentRetriever(deps.ds, await updateRetriever(deps.ds, caller, params.retriever_id, body)),
  }),
});

route({
  operationId: 'DeleteRetriever',
  method: 'delete',
  path: '/retrievers/{retriever_id}',
  tag: TAG,
  params: idPath,
  summary: 'Deletes the retriever (its knowledge bases stay); assistants that name it no longer do.',
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
    // `filter` takes any JSON member values (compared as strings); the service's type names the usual ones.
    const request = body as Parameters<typeof queryRetrieverRequest>[3];
    const row = await queryRetrieverRequest(deps, caller, params.retriever_id, request);
    return { status: 200, body: { retriever_query_id: row.retriever_query_id, outputs: row.outputs } };
  },
});

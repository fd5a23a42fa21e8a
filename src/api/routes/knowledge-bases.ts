// Knowledge bases: CRUD, query, and the persisted queries. Their jobs are in knowledge-base-jobs.ts, their
// searches in knowledge-base-searches.ts.
import type { Client } from '@temporalio/client';
import type { KnowledgeBase, KnowledgeBaseQuery } from '../../persistence/entities/knowledge-base';
import { iso } from '../../persistence/scoped';
import {
  createKnowledgeBase,
  deleteKnowledgeBase,
  findKnowledgeBase,
  listKnowledgeBases,
  updateKnowledgeBase,
} from '../../services/knowledge/knowledge-bases';
import { settingsOf } from '../../services/knowledge/settings';
import { findQuery, listQueries, MAX_QUERY_COUNT, retrievalOf } from '../../services/knowledge/retrieval/query';
import { queryKnowledgeBase } from '../../services/knowledge/retrieval/run-query';
import { SCHEDULE_EXPRESSION_PATTERN, SCHEDULE_FORMS } from '../../temporal/user-schedules';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { configInput, kbType, language } from '../schemas/knowledge-bases';

const TAG = 'Knowledge bases';
const MAX_ASSET_PATHS = 100;
export const MAX_QUERY_CHARS = 10_000;

const assetPaths = {
  type: 'array',
  maxItems: MAX_ASSET_PATHS,
  items: {
    type: 'string',
    maxLength: 293,
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/[^\\u0000]*$',
    description:
      '<bucket_id>/<asset name>, or <bucket_id>/<prefix>/ for every asset under the prefix (<bucket_id>/: the whole bucket)',
  },
} as const;

const scheduleExpression = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: SCHEDULE_EXPRESSION_PATTERN,
  description: `Starts a job on this schedule (a Temporal Schedule; skipped while a job is open). ${SCHEDULE_FORMS}`,
} as const;
const transforms = {
  type: 'array',
  maxItems: 10,
  items: {
    type: 'object',
    required: ['structure'],
    properties: {
      structure: {
        type: 'object',
        required: ['structure_id'],
        properties: { structure_id: uuid, args: { type: 'array', maxItems: 100, items: str(0, 10_000) } },
      },
    },
  },
  description:
    "Structures each asset's text passes through before chunking: a run with the text (a TextArtifact as JSON) as first argument, then `args`; its output replaces the text.",
} as const;

const settingsOutput = {
  type: 'object',
  required: ['embedding_model', 'use_default_embedding_model', 'query_schema'],
  properties: {
    embedding_model: {
      type: 'string',
      description: '`provider/model`; empty when the knowledge base is full text only.',
    },
    use_default_embedding_model: { type: 'boolean' },
    chunking: { type: 'string', enum: ['length'], description: 'Present when jobs chunk by length only.' },
    parent_child: { type: 'boolean', description: 'Present (true) when queries answer sections (parent-child).' },
    query_schema: {},
    structured_columns: { type: 'array', items: {} },
    unstructured_columns: { type: 'array', items: {} },
  },
} as const;

const KnowledgeBaseSchema = defineSchema('KnowledgeBase', {
  type: 'object',
  required: [
    'knowledge_base_id',
    'name',
    'type',
    'config',
    'asset_paths',
    'retrieval',
    'embedding_dimensions',
    'language',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    knowledge_base_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'string' },
    config: {
      type: 'object',
      properties: {
        gtc_pg_vector: settingsOutput,
        gtc_hybrid_sql_pg_vector: settingsOutput,
        pg_vector: {
          ...settingsOutput,
          required: [...settingsOutput.required, 'connection_string'],
          properties: { ...settingsOutput.properties, connection_string: { type: 'string' } },
        },
      },
    },
    asset_paths: { type: 'array', items: { type: 'string' } },
    retrieval: {
      type: 'string',
      enum: ['hybrid', 'vector', 'full_text'],
      description: 'How queries rank: full_text when no embedding model is configured.',
    },
    embedding_dimensions: {
      type: ['integer', 'null'],
      description: "The embedding model's dimension, known after the first job embedded something.",
    },
    use_default_embedding_model: { type: 'boolean' },
    language: { type: 'string', description: 'The text search configuration of the full text.' },
    schedule_expression: { type: 'string' },
    transforms: { type: 'array', items: { type: 'object' } },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

export const QUERY_SCHEMA = {
  type: 'object',
  properties: {
    count: { type: 'integer', minimum: 1, maximum: MAX_QUERY_COUNT },
    filter: { type: 'object', description: 'Entries whose meta holds every member (values compared as strings).' },
    distance_metric: { type: 'string', enum: ['cosine'] },
    include_vectors: { type: 'boolean' },
  },
} as const;

const present = (kb: KnowledgeBase) => {
  const given = settingsOf(kb.config, kb.type) ?? {};
  return {
    knowledge_base_id: kb.knowledge_base_id,
    name: kb.name,
    ...(kb.description != null ? { description: kb.description } : {}),
    type: kb.type,
    config: {
      [kb.type]: {
        embedding_model: kb.embedding_model ?? '',
        use_default_embedding_model:
          given.use_default_embedding_model === true ||
          (given.embedding_model === undefined && given.use_default_embedding_model !== false),
        ...(given.chunking === 'length' ? { chunking: 'length' } : {}),
        ...(given.parent_child === true ? { parent_child: true } : {}),
        query_schema: QUERY_SCHEMA,
        ...(kb.type === 'gtc_hybrid_sql_pg_vector' ? { structured_columns: [], unstructured_columns: [] } : {}),
        // The password never leaves: only the connection string (which holds none) is answered.
        ...(kb.type === 'pg_vector' ? { connection_string: String(given.connection_string ?? '') } : {}),
      },
    },
    asset_paths: kb.asset_paths,
    retrieval: retrievalOf(kb),
    embedding_dimensions: kb.embedding_dimensions,
    language: kb.language,
    ...(kb.schedule_expression != null ? { schedule_expression: kb.schedule_expression } : {}),
    transforms: kb.transforms ?? [],
    organization_id: kb.organization_id,
    created_by: kb.created_by,
    created_at: iso(kb.created_at),
    updated_at: iso(kb.updated_at),
  };
};

export const EntrySchema = {
  type: 'object',
  required: ['id', 'score', 'meta', 'namespace'],
  properties: {
    id: { type: 'string' },
    score: { type: 'number' },
    meta: { type: 'object', additionalProperties: { type: 'string' } },
    namespace: { type: 'string' },
    vector: { type: 'array', items: { type: 'number' } },
  },
} as const;

const QuerySchema = defineSchema('KnowledgeBaseQuery', {
  type: 'object',
  required: [
    'knowledge_base_query_id',
    'knowledge_base_id',
    'query',
    'query_args',
    'entries',
    'created_by',
    'created_at',
  ],
  properties: {
    knowledge_base_query_id: uuid,
    knowledge_base_id: uuid,
    query: { type: 'string' },
    query_args: {},
    entries: { type: 'array', items: EntrySchema },
    created_by: { type: 'string' },
    created_at: timestamp,
  },
});

const presentQuery = (q: KnowledgeBaseQuery) => ({
  knowledge_base_query_id: q.knowledge_base_query_id,
  knowledge_base_id: q.knowledge_base_id,
  query: q.query,
  query_args: q.query_args,
  entries: q.entries,
  created_by: q.created_by,
  created_at: iso(q.created_at),
});

const fields = {
  name: str(1, 200),
  description: str(0, 200),
  type: kbType,
  config: configInput,
  asset_paths: assetPaths,
  embedding_model: str(1, 200),
  use_default_embedding_model: { type: 'boolean' },
  language,
  schedule_expression: scheduleExpression,
  transforms,
} as const;
const kbPath = { knowledge_base_id: uuid } as const;
const schedulesOf = (deps: { temporal: Client; config: { temporal: { taskQueue: string } } }) => ({
  temporal: deps.temporal,
  taskQueue: deps.config.temporal.taskQueue,
});

/** A pg_vector type goes with a pg_vector config member, and only with it. */
const pgVectorPairing = [
  {
    if: { required: ['type'], properties: { type: { const: 'pg_vector' } } },
    then: { properties: { config: { required: ['pg_vector'] } } },
  },
  {
    if: { required: ['config'], properties: { config: { required: ['pg_vector'] } } },
    then: { properties: { type: { const: 'pg_vector' } } },
  },
];
const refsNote = 'Every asset path must name a bucket of the organization (409 naming it otherwise).';

route({
  operationId: 'ListKnowledgeBases',
  method: 'get',
  path: '/knowledge-bases',
  tag: TAG,
  paged: true,
  summary: "The organization's knowledge bases, newest first.",
  responses: {
    200: {
      description: 'Knowledge bases',
      schema: pageOf('KnowledgeBaseList', 'knowledge_bases', KnowledgeBaseSchema),
    },
  },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listKnowledgeBases(deps.ds, caller, page);
    return { status: 200, body: { knowledge_bases: items.map(present), pagination } };
  },
});

route({
  operationId: 'CreateKnowledgeBase',
  method: 'post',
  path: '/knowledge-bases',
  tag: TAG,
  summary: `Creates a knowledge base; its content arrives with its jobs. ${refsNote}`,
  body: defineSchema('CreateKnowledgeBaseRequest', {
    type: 'object',
    required: ['name', 'type', 'config'],
    properties: fields,
    allOf: pgVectorPairing,
  }),
  bodyRequired: true,
  responses: { 201: { description: 'Knowledge base', schema: KnowledgeBaseSchema } },
  handler: async ({ deps, caller, body }) => {
    // The schema is assembled from the types' variants at run time, so it has no static type: the service's
    // request type names what ajv checked.
    const request = body as Parameters<typeof createKnowledgeBase>[3];
    const kb = await createKnowledgeBase(deps.ds, deps.config.models, caller, request, schedulesOf(deps), deps.box);
    return { status: 201, body: present(kb) };
  },
});

route({
  operationId: 'GetKnowledgeBase',
  method: 'get',
  path: '/knowledge-bases/{knowledge_base_id}',
  tag: TAG,
  params: kbPath,
  summary: 'A knowledge base.',
  responses: { 200: { description: 'Knowledge base', schema: KnowledgeBaseSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await findKnowledgeBase(deps.ds, caller, params.knowledge_base_id)),
  }),
});

route({
  operationId: 'UpdateKnowledgeBase',
  method: 'patch',
  path: '/knowledge-bases/{knowledge_base_id}',
  tag: TAG,
  params: kbPath,
  summary: `Changes the given fields; a changed embedding model re-embeds everything at the next job. ${refsNote}`,
  body: defineSchema('UpdateKnowledgeBaseRequest', {
    type: 'object',
    properties: {
      ...fields,
      schedule_expression: { anyOf: [scheduleExpression, { type: 'null' }], description: 'null removes the schedule.' },
    },
    allOf: pgVectorPairing,
  }),
  responses: { 200: { description: 'Knowledge base', schema: KnowledgeBaseSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: present(
      await updateKnowledgeBase(
        deps.ds,
        deps.config.models,
        caller,
        params.knowledge_base_id,
        // Assembled from the types' variants at run time (no static type): the service's type names what ajv checked.
        body as Parameters<typeof updateKnowledgeBase>[4],
        schedulesOf(deps),
        deps.box,
      ),
    ),
  }),
});

route({
  operationId: 'DeleteKnowledgeBase',
  method: 'delete',
  path: '/knowledge-bases/{knowledge_base_id}',
  tag: TAG,
  params: kbPath,
  summary:
    'Deletes the knowledge base with its jobs, chunks and queries; open jobs are cancelled first (bounded wait). ' +
    'Assistants that name it and the inline components of retrievers that retrieve from it no longer do.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteKnowledgeBase(deps, caller, params.knowledge_base_id);
    return { status: 204 };
  },
});

route({
  operationId: 'QueryKnowledgeBase',
  method: 'post',
  path: '/knowledge-bases/{knowledge_base_id}/query',
  tag: TAG,
  // griptape's GriptapeCloudVectorStoreDriver queries from inside a structure run, with the run's credential.
  runScoped: true,
  params: kbPath,
  summary:
    "The entries (chunks) that best match `query`: hybrid (vectors and full text fused by reciprocal rank fusion), vector or full text, as the record's `retrieval` says. Persisted.",
  body: defineSchema('QueryKnowledgeBaseRequest', {
    type: 'object',
    required: ['query'],
    properties: { query: str(1, MAX_QUERY_CHARS), query_args: QUERY_SCHEMA },
  }),
  bodyRequired: true,
  responses: { 200: { description: 'Knowledge base query', schema: QuerySchema } },
  handler: async ({ deps, caller, params, body }) => {
    // `filter` takes any JSON member values (compared as strings); the service's type names the usual ones.
    const request = body as Parameters<typeof queryKnowledgeBase>[3];
    return {
      status: 200,
      body: presentQuery(await queryKnowledgeBase(deps, caller, params.knowledge_base_id, request)),
    };
  },
});

route({
  operationId: 'ListKnowledgeBaseQueries',
  method: 'get',
  path: '/knowledge-bases/{knowledge_base_id}/queries',
  tag: TAG,
  params: kbPath,
  paged: true,
  summary: "The knowledge base's queries, newest first.",
  responses: {
    200: {
      description: 'Knowledge base queries',
      schema: pageOf('KnowledgeBaseQueryList', 'knowledge_base_queries', QuerySchema),
    },
  },
  handler: async ({ deps, caller, params, page }) => {
    const { items, pagination } = await listQueries(deps.ds, caller, params.knowledge_base_id, page);
    return { status: 200, body: { knowledge_base_queries: items.map(presentQuery), pagination } };
  },
});

route({
  operationId: 'GetKnowledgeBaseQuery',
  method: 'get',
  path: '/knowledge-base-queries/{knowledge_base_query_id}',
  tag: TAG,
  params: { knowledge_base_query_id: uuid },
  summary: 'A persisted knowledge base query with its entries.',
  responses: { 200: { description: 'Knowledge base query', schema: QuerySchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentQuery(await findQuery(deps.ds, caller, params.knowledge_base_query_id)),
  }),
});

// Knowledge base searches: a model's answer grounded in the knowledge base's chunks, persisted.
import type { KnowledgeBaseSearch } from '../../persistence/entities/retrieval';
import { iso } from '../../persistence/scoped';
import { findSearch, listSearches, searchKnowledgeBase } from '../../services/knowledge/retrieval/search';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { EntrySchema, MAX_QUERY_CHARS, QUERY_SCHEMA } from './knowledge-bases';

const TAG = 'Knowledge bases';

const SearchSchema = defineSchema('KnowledgeBaseSearch', {
  type: 'object',
  required: [
    'knowledge_base_search_id',
    'knowledge_base_id',
    'query',
    'query_args',
    'result',
    'entries',
    'model',
    'created_by',
    'created_at',
  ],
  properties: {
    knowledge_base_search_id: uuid,
    knowledge_base_id: uuid,
    query: { type: 'string' },
    query_args: {},
    result: { type: 'string', description: "The model's answer; [n] cites entries[n-1]." },
    entries: { type: 'array', items: EntrySchema, description: 'The retrieved chunks the model answered from.' },
    model: { type: ['string', 'null'], description: 'The model that answered; null when no chunk matched.' },
    created_by: { type: 'string' },
    created_at: timestamp,
  },
});

const present = (s: KnowledgeBaseSearch) => ({
  knowledge_base_search_id: s.knowledge_base_search_id,
  knowledge_base_id: s.knowledge_base_id,
  query: s.query,
  query_args: s.query_args,
  result: s.result,
  entries: s.entries,
  model: s.model,
  created_by: s.created_by,
  created_at: iso(s.created_at),
});

const kbPath = { knowledge_base_id: uuid } as const;

route({
  operationId: 'SearchKnowledgeBase',
  method: 'post',
  path: '/knowledge-bases/{knowledge_base_id}/search',
  tag: TAG,
  // griptape's GriptapeCloudVectorStoreDriver queries from inside a structure run, with the run's credential.
  runScoped: true,
  params: kbPath,
  summary:
    'A natural-language answer to `query` by the default model, from the chunks a query with the same arguments retrieves, citing them as [n]. Persisted. 503 when no model (DEFAULT_MODEL) is configured or the provider fails.',
  body: defineSchema('SearchKnowledgeBaseRequest', {
    type: 'object',
    required: ['query'],
    properties: { query: str(1, MAX_QUERY_CHARS), query_args: QUERY_SCHEMA },
  }),
  bodyRequired: true,
  responses: { 200: { description: 'Knowledge base search', schema: SearchSchema } },
  handler: async ({ deps, caller, params, body }) => {
    // `filter` takes any JSON member values (compared as strings); the service's type names the usual ones.
    const request = body as Parameters<typeof searchKnowledgeBase>[3];
    return { status: 200, body: present(await searchKnowledgeBase(deps, caller, params.knowledge_base_id, request)) };
  },
});

route({
  operationId: 'ListKnowledgeBaseSearches',
  method: 'get',
  path: '/knowledge-bases/{knowledge_base_id}/searches',
  tag: TAG,
  params: kbPath,
  paged: true,
  summary: "The knowledge base's searches, newest first.",
  responses: {
    200: {
      description: 'Knowledge base searches',
      schema: pageOf('KnowledgeBaseSearchList', 'knowledge_base_searches', SearchSchema),
    },
  },
  handler: async ({ deps, caller, params, page }) => {
    const { items, pagination } = await listSearches(deps.ds, caller, params.knowledge_base_id, page);
    return { status: 200, body: { knowledge_base_searches: items.map(present), pagination } };
  },
});

route({
  operationId: 'GetKnowledgeBaseSearch',
  method: 'get',
  path: '/knowledge-base-searches/{knowledge_base_search_id}',
  tag: TAG,
  params: { knowledge_base_search_id: uuid },
  summary: 'A persisted knowledge base search with its answer and the chunks it was given.',
  responses: { 200: { description: 'Knowledge base search', schema: SearchSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await findSearch(deps.ds, caller, params.knowledge_base_search_id)),
  }),
});

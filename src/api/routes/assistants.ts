// Assistants: CRUD. Their runs are in assistant-runs.ts.
import { Assistant } from '../../persistence/entities/assistant';
import { iso } from '../../persistence/scoped';
import {
  type AssistantFields,
  createAssistant,
  deleteAssistant,
  findAssistant,
  listAssistants,
  updateAssistant,
} from '../../services/assistants/assistants';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { ConcurrencySchema, normalizedConcurrency } from './concurrency-fields';
import { retryPolicyAnswer, retryPolicyMember } from './run-retries';

const TAG = 'Assistants';
/** Bounds of an assistant's id lists and default input. */
export const MAX_IDS = 100;
export const MAX_INPUT_CHARS = 100_000;

export const idList = { type: 'array', items: uuid, maxItems: MAX_IDS } as const;

const AssistantSchema = defineSchema('Assistant', {
  type: 'object',
  required: [
    'assistant_id',
    'name',
    'description',
    'knowledge_base_ids',
    'retriever_ids',
    'ruleset_ids',
    'structure_ids',
    'tool_ids',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    assistant_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    input: { type: 'string', description: "Default input of its runs (a run's own `input` wins)." },
    knowledge_base_ids: idList,
    retriever_ids: idList,
    ruleset_ids: idList,
    structure_ids: idList,
    tool_ids: idList,
    concurrency: ConcurrencySchema,
    retry_policy: retryPolicyAnswer,
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const present = (a: Assistant) => ({
  assistant_id: a.assistant_id,
  name: a.name,
  description: a.description,
  ...(a.input != null ? { input: a.input } : {}),
  knowledge_base_ids: a.knowledge_base_ids,
  retriever_ids: a.retriever_ids,
  ruleset_ids: a.ruleset_ids,
  structure_ids: a.structure_ids,
  tool_ids: a.tool_ids,
  concurrency: a.concurrency,
  ...(a.retry_policy ? { retry_policy: a.retry_policy } : {}),
  organization_id: a.organization_id,
  created_by: a.created_by,
  created_at: iso(a.created_at),
  updated_at: iso(a.updated_at),
});

const fields = {
  name: str(1, 200),
  description: str(1, 200),
  input: { type: ['string', 'null'], maxLength: MAX_INPUT_CHARS },
  knowledge_base_ids: idList,
  retriever_ids: idList,
  ruleset_ids: idList,
  structure_ids: idList,
  tool_ids: idList,
  concurrency: ConcurrencySchema,
  retry_policy: retryPolicyMember,
} as const;

/** The request's fields, `concurrency` as stored (the strategy always named). */
const fieldsOf = (body: Record<string, unknown>): AssistantFields => ({
  ...body,
  concurrency: normalizedConcurrency(body.concurrency as AssistantFields['concurrency']),
});
const assistantPath = { assistant_id: uuid } as const;
const idsNote =
  'Every id must name a record of the organization (409 naming the missing ones). Knowledge bases and ' +
  'retrievers become retrieval functions the model may call (docs/assistants.md).';

route({
  operationId: 'ListAssistants',
  method: 'get',
  path: '/assistants',
  tag: TAG,
  paged: true,
  summary: "The organization's assistants, newest first.",
  responses: { 200: { description: 'Assistants', schema: pageOf('AssistantList', 'assistants', AssistantSchema) } },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listAssistants(deps.ds, caller, page);
    return { status: 200, body: { assistants: items.map(present), pagination } };
  },
});

route({
  operationId: 'CreateAssistant',
  method: 'post',
  path: '/assistants',
  tag: TAG,
  summary: `Creates an assistant. ${idsNote}`,
  body: defineSchema('CreateAssistantRequest', {
    type: 'object',
    required: ['name'],
    properties: fields,
  }),
  bodyRequired: true,
  responses: { 201: { description: 'Assistant', schema: AssistantSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: present(await createAssistant(deps.ds, caller, { ...fieldsOf(body), name: body.name })),
  }),
});

route({
  operationId: 'GetAssistant',
  method: 'get',
  path: '/assistants/{assistant_id}',
  tag: TAG,
  params: assistantPath,
  summary: 'An assistant.',
  responses: { 200: { description: 'Assistant', schema: AssistantSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await findAssistant(deps.ds, caller, params.assistant_id)),
  }),
});

route({
  operationId: 'UpdateAssistant',
  method: 'patch',
  path: '/assistants/{assistant_id}',
  tag: TAG,
  params: assistantPath,
  summary:
    'Changes the given fields; a given id list replaces the stored one (`retriever_ids` too, which the interface ' +
    `leaves out of this request: validated like the others). ${idsNote}`,
  body: defineSchema('UpdateAssistantRequest', { type: 'object', properties: fields }),
  responses: { 200: { description: 'Assistant', schema: AssistantSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: present(await updateAssistant(deps.ds, caller, params.assistant_id, fieldsOf(body))),
  }),
});

route({
  operationId: 'DeleteAssistant',
  method: 'delete',
  path: '/assistants/{assistant_id}',
  tag: TAG,
  params: assistantPath,
  summary: 'Deletes the assistant with its runs and their events. Open runs are cancelled first (bounded wait).',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteAssistant(deps, caller, params.assistant_id);
    return { status: 204 };
  },
});

// Threads and their messages: what the griptape GriptapeCloudConversationMemoryDriver reads and writes
// (a PATCH with `messages` replaces them all) and where assistant runs keep their conversation.
// Domain logic in src/services/conversations/threads.ts.
import { ThreadMessage } from '../../persistence/entities';
import { iso } from '../../persistence/scoped';
import {
  createThread,
  createThreadMessage,
  deleteMessage,
  deleteThread,
  findMessage,
  findThread,
  getThread,
  listThreadMessages,
  listThreads,
  MAX_MESSAGE_TEXT,
  MAX_MESSAGES_PER_REQUEST,
  ThreadView,
  updateMessage,
  updateThread,
} from '../../services/conversations/threads';
import { route } from '../http/route';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';

const metadata = { type: 'object', description: 'Any JSON object (at most 64 KiB as JSON).' };
const text = str(0, MAX_MESSAGE_TEXT);

// ---- Threads ----

const ThreadSchema = defineSchema('Thread', {
  type: 'object',
  required: [
    'thread_id',
    'name',
    'alias',
    'metadata',
    'message_count',
    'messages_length',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    thread_id: uuid,
    name: { type: 'string' },
    alias: { type: ['string', 'null'] },
    metadata: { type: 'object' },
    message_count: { type: 'integer', description: 'Number of messages.' },
    messages_length: {
      type: 'integer',
      description: 'Characters (Unicode code points) of all inputs and outputs together.',
    },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const presentThread = (t: ThreadView) => ({
  thread_id: t.thread_id,
  name: t.name,
  alias: t.alias,
  metadata: t.metadata,
  message_count: t.message_count,
  messages_length: t.messages_length,
  organization_id: t.organization_id,
  created_by: t.created_by,
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
});

const MessageInput = defineSchema('ThreadMessageInput', {
  type: 'object',
  required: ['input', 'output'],
  properties: { input: text, output: text, metadata },
});

const threadFields = {
  name: str(1, 200),
  alias: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 200,
    description: 'Unique per organization; null clears it.',
  },
  messages: { type: 'array', items: MessageInput, maxItems: MAX_MESSAGES_PER_REQUEST },
  metadata,
};

route({
  operationId: 'ListThreads',
  method: 'get',
  path: '/threads',
  tag: 'Threads',
  paged: true,
  summary:
    'Threads, newest first. `alias` and `created_by` match exactly; `starts_with` matches the beginning of the name or the alias.',
  query: { alias: { type: 'string' }, starts_with: { type: 'string' }, created_by: { type: 'string' } },
  responses: { 200: { description: 'Threads', schema: pageOf('ThreadList', 'threads', ThreadSchema) } },
  handler: async ({ deps, caller, page, query }) => {
    const { items, pagination } = await listThreads(deps.ds, caller, page, {
      alias: query.alias,
      startsWith: query.starts_with,
      createdBy: query.created_by,
    });
    return { status: 200, body: { threads: items.map(presentThread), pagination } };
  },
});

route({
  operationId: 'CreateThread',
  method: 'post',
  path: '/threads',
  tag: 'Threads',
  bodyRequired: true,
  summary: `Creates a thread, optionally with its first messages (at most ${MAX_MESSAGES_PER_REQUEST}); a taken alias is a 409.`,
  body: defineSchema('CreateThreadRequest', { type: 'object', required: ['name'], properties: threadFields }),
  responses: { 201: { description: 'Thread', schema: ThreadSchema } },
  handler: async ({ deps, caller, body }) => ({
    status: 201,
    body: presentThread(await createThread(deps.ds, caller, body)),
  }),
});

route({
  operationId: 'GetThread',
  method: 'get',
  path: '/threads/{thread_id}',
  tag: 'Threads',
  params: { thread_id: uuid },
  summary: 'A thread with the size of its conversation.',
  responses: { 200: { description: 'Thread', schema: ThreadSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentThread(await getThread(deps.ds, caller, params.thread_id)),
  }),
});

route({
  operationId: 'UpdateThread',
  method: 'patch',
  path: '/threads/{thread_id}',
  tag: 'Threads',
  params: { thread_id: uuid },
  summary:
    'Changes the given fields. `messages` REPLACES all messages of the thread; `metadata` replaces the whole object.',
  body: defineSchema('UpdateThreadRequest', { type: 'object', properties: threadFields }),
  responses: { 200: { description: 'Thread', schema: ThreadSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: presentThread(await updateThread(deps.ds, caller, params.thread_id, body)),
  }),
});

route({
  operationId: 'DeleteThread',
  method: 'delete',
  path: '/threads/{thread_id}',
  tag: 'Threads',
  params: { thread_id: uuid },
  summary: 'Deletes a thread and its messages.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteThread(deps.ds, await findThread(deps.ds, caller, params.thread_id));
    return { status: 204 };
  },
});

// ---- Messages ----

const MessageSchema = defineSchema('ThreadMessage', {
  type: 'object',
  required: [
    'message_id',
    'thread_id',
    'index',
    'input',
    'output',
    'metadata',
    'organization_id',
    'created_by',
    'created_at',
    'updated_at',
  ],
  properties: {
    message_id: uuid,
    thread_id: uuid,
    index: { type: 'integer', description: 'Position in the thread, from 0.' },
    input: { type: 'string' },
    output: { type: 'string' },
    metadata: { type: 'object' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const presentMessage = (m: ThreadMessage) => ({
  message_id: m.message_id,
  thread_id: m.thread_id,
  index: m.index,
  input: m.input,
  output: m.output,
  metadata: m.metadata,
  organization_id: m.organization_id,
  created_by: m.created_by,
  created_at: iso(m.created_at),
  updated_at: iso(m.updated_at),
});

route({
  operationId: 'ListThreadMessages',
  method: 'get',
  path: '/threads/{thread_id}/messages',
  tag: 'Threads',
  paged: true,
  // The conversation-memory driver reads one page without page_size: what one PATCH wrote comes back whole.
  pageSize: { default: MAX_MESSAGES_PER_REQUEST, max: MAX_MESSAGES_PER_REQUEST },
  summary: `A thread's messages by index (page_size defaults to ${MAX_MESSAGES_PER_REQUEST}).`,
  params: { thread_id: uuid },
  responses: { 200: { description: 'Messages', schema: pageOf('ThreadMessageList', 'messages', MessageSchema) } },
  handler: async ({ deps, caller, params, page }) => {
    const { items, pagination } = await listThreadMessages(deps.ds, caller, params.thread_id, page);
    return { status: 200, body: { messages: items.map(presentMessage), pagination } };
  },
});

route({
  operationId: 'CreateThreadMessage',
  method: 'post',
  path: '/threads/{thread_id}/messages',
  tag: 'Threads',
  bodyRequired: true,
  summary: 'Appends a message at the next index.',
  params: { thread_id: uuid },
  body: MessageInput,
  responses: { 201: { description: 'Message', schema: MessageSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 201,
    body: presentMessage(await createThreadMessage(deps.ds, caller, params.thread_id, body)),
  }),
});

route({
  operationId: 'GetMessage',
  method: 'get',
  path: '/messages/{message_id}',
  tag: 'Threads',
  params: { message_id: uuid },
  summary: 'A message.',
  responses: { 200: { description: 'Message', schema: MessageSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentMessage(await findMessage(deps.ds, caller, params.message_id)),
  }),
});

route({
  operationId: 'UpdateMessage',
  method: 'patch',
  path: '/messages/{message_id}',
  tag: 'Threads',
  params: { message_id: uuid },
  summary: 'Changes the given fields of a message (`metadata` replaces the whole object); its index stays.',
  body: defineSchema('UpdateThreadMessageRequest', {
    type: 'object',
    properties: { input: text, output: text, metadata },
  }),
  responses: { 200: { description: 'Message', schema: MessageSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 200,
    body: presentMessage(await updateMessage(deps.ds, caller, params.message_id, body)),
  }),
});

route({
  operationId: 'DeleteMessage',
  method: 'delete',
  path: '/messages/{message_id}',
  tag: 'Threads',
  params: { message_id: uuid },
  summary: 'Deletes a message; the later messages of its thread move down one index.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteMessage(deps.ds, caller, params.message_id);
    return { status: 204 };
  },
});

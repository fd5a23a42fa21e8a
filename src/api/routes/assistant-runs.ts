// Assistant runs: each one is a workflow (assistant-run-<uuid>) that asks the model, calls the assistant's
// structures and tools for it, and answers; events are listed and streamed like structure run events.
import type { RunEvent } from '../../persistence/entities';
import { RUN_STATUSES } from '../../persistence/entities/run';
import { iso } from '../../persistence/scoped';
import {
  AssistantRunRecord,
  cancelAssistantRun,
  createAssistantRun,
  findAssistantRun,
  listAssistantRuns,
  replayAssistantRun,
} from '../../services/assistants/runs';
import { route, type IdempotentAnswer } from '../http/route';
import { eventStreamQuery, eventStreamResponse, resumeAfter, sseFrame, streamRunEvents } from '../sse/event-stream';
import { defineSchema, pageOf, str, timestamp, uuid } from '../schemas/registry';
import { idList, MAX_INPUT_CHARS } from './assistants';
import { replayedFrom } from './code-run-records';
import { idempotencyKeyField, presentIdempotencyKey } from './idempotency-fields';
import { ConcurrencyKeySchema } from './concurrency-fields';
import { presentRunRetries, retryPolicyMember, runRetryProperties } from './run-retries';
import { EVENT_LIST_SUMMARY, eventListPage, eventListQuery, eventListSchema } from '../http/event-lists';

const TAG = 'Assistant runs';
const MAX_ARGS = 100;

const AssistantRunSchema = defineSchema('AssistantRun', {
  type: 'object',
  required: [
    'assistant_run_id',
    'assistant_id',
    'args',
    'completed_at',
    'created_at',
    'created_by',
    'knowledge_base_ids',
    'retriever_ids',
    'ruleset_ids',
    'structure_ids',
    'tool_ids',
    'status',
    'stream',
    'updated_at',
  ],
  properties: {
    assistant_run_id: uuid,
    assistant_id: uuid,
    args: { type: 'array', items: { type: 'string' } },
    input: { type: 'string', description: "The run's input, else the assistant's at creation." },
    thread_id: uuid,
    stream: { type: 'boolean', description: 'Whether TextChunkEvent events carry the answer as it is generated.' },
    knowledge_base_ids: idList,
    retriever_ids: idList,
    ruleset_ids: idList,
    structure_ids: idList,
    tool_ids: idList,
    status: { type: 'string', enum: [...RUN_STATUSES] },
    status_detail: {
      description:
        'QUEUED while waiting for an execution slot (its organization, its concurrency key, a paused queue): `{reason: ' +
        '"WaitingForExecutionSlot", message, waiting_for, executing, limit, ahead}`, or for its next attempt: `{reason: "Retrying", ' +
        'message, attempt, retry_at}`; ' +
        'SUCCEEDED: `{reason: "Completed", message: null}`; FAILED/ERROR: `{reason, error}` (reasons: ModelRequestRejected, ' +
        'ModelNotConfigured, ToolUnavailable, RetrievalSourceNotFound, MaxStepsExceeded, ModelUnreachable, ModelStreamInterrupted, TimeLimitExceeded, WorkerLost, ...); ' +
        'CANCELLED: `{reason: "Cancelled", message, requested_by}`.',
    },
    output: {
      description: 'The answer as a TextArtifact dict `{type: "TextArtifact", id, name, value, meta, reference}`.',
    },
    model: {
      type: 'string',
      description: 'The model that answered, as `provider/model` (before that: the one requested, if any).',
    },
    usage: {
      type: 'object',
      required: ['input_tokens', 'output_tokens'],
      properties: { input_tokens: { type: 'number' }, output_tokens: { type: 'number' } },
      description: "Tokens used, summed over the run's model calls.",
    },
    created_by: { type: 'string' },
    replayed_from_run_id: replayedFrom,
    idempotency_key: idempotencyKeyField,
    concurrency_key: ConcurrencyKeySchema,
    ...runRetryProperties,
    created_at: timestamp,
    updated_at: timestamp,
    started_at: { type: ['string', 'null'], format: 'date-time' },
    completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
});

const present = ({ run: r, details: d }: AssistantRunRecord) => ({
  assistant_run_id: r.run_id,
  assistant_id: r.assistant_id,
  args: r.args,
  ...(typeof r.input === 'string' ? { input: r.input } : {}),
  ...(d.thread_id ? { thread_id: d.thread_id } : {}),
  stream: d.stream,
  knowledge_base_ids: d.knowledge_base_ids,
  retriever_ids: d.retriever_ids,
  ruleset_ids: d.ruleset_ids,
  structure_ids: d.structure_ids,
  tool_ids: d.tool_ids,
  status: r.status,
  ...(r.status_detail != null ? { status_detail: r.status_detail } : {}),
  ...(r.output != null ? { output: r.output } : {}),
  ...(r.model ? { model: r.model } : {}),
  ...(r.usage ? { usage: r.usage } : {}),
  created_by: r.created_by,
  ...(r.replayed_from_run_id ? { replayed_from_run_id: r.replayed_from_run_id } : {}),
  ...presentIdempotencyKey(r),
  ...(r.concurrency_key !== null ? { concurrency_key: r.concurrency_key } : {}),
  ...presentRunRetries(r),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
});

const nullableIdList = { type: ['array', 'null'], items: uuid, maxItems: 100 } as const;
const runPath = { assistant_run_id: uuid } as const;

/** A repeated Idempotency-Key's answer: the run the first request made, as it is now. */
const replayAnswer: IdempotentAnswer = async ({ deps, caller, record }) => ({
  status: 200,
  body: present(await findAssistantRun(deps.ds, caller, record.id)),
});

route({
  operationId: 'CreateAssistantRun',
  needsDiskSpace: true,
  method: 'post',
  path: '/assistants/{assistant_id}/runs',
  tag: TAG,
  summary:
    "Starts a run. The model is given the rulesets as instructions, the thread's earlier exchanges, and the user " +
    "message (`input`, else the assistant's, then each of `args`, blank-line separated); the structures and tool " +
    "activities are offered as functions. Each id list is the request's when given, else the assistant's, plus the " +
    "`additional_*` list. `thread_id` wins over `new_thread`; a new thread's id is answered in `thread_id`. On success " +
    'the exchange is appended to the thread.',
  params: { assistant_id: uuid },
  body: defineSchema('CreateAssistantRunRequest', {
    type: 'object',
    properties: {
      args: { type: 'array', items: { type: 'string', maxLength: MAX_INPUT_CHARS }, maxItems: MAX_ARGS },
      input: { type: ['string', 'null'], maxLength: MAX_INPUT_CHARS },
      stream: { type: 'boolean' },
      model: {
        oneOf: [str(1, 200), { type: 'null' }],
        description: '`provider/model`; the configured default when absent.',
      },
      new_thread: { type: 'boolean' },
      thread_id: { oneOf: [uuid, { type: 'null' }] },
      knowledge_base_ids: nullableIdList,
      retriever_ids: nullableIdList,
      ruleset_ids: nullableIdList,
      structure_ids: nullableIdList,
      tool_ids: nullableIdList,
      additional_knowledge_base_ids: nullableIdList,
      additional_retriever_ids: nullableIdList,
      additional_ruleset_ids: nullableIdList,
      additional_structure_ids: nullableIdList,
      additional_tool_ids: nullableIdList,
      concurrency_key: ConcurrencyKeySchema,
      retry_policy: {
        ...retryPolicyMember,
        description: "This run's retry policy (null: never retried), instead of the assistant's.",
      },
    },
  }),
  responses: { 201: { description: 'The run, QUEUED', schema: AssistantRunSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 201,
    body: present(await createAssistantRun(deps, caller, params.assistant_id, body)),
  }),
  idempotent: replayAnswer,
});

route({
  operationId: 'ListAssistantRuns',
  method: 'get',
  path: '/assistants/{assistant_id}/runs',
  tag: TAG,
  paged: true,
  summary: 'Runs of an assistant, newest first; `status` filters (`status=A,B` or repeated).',
  params: { assistant_id: uuid },
  query: { status: { type: 'array', items: { type: 'string', enum: [...RUN_STATUSES] } } },
  responses: { 200: { description: 'Runs', schema: pageOf('AssistantRunList', 'assistant_runs', AssistantRunSchema) } },
  handler: async ({ deps, caller, params, page, query }) => {
    const { items, pagination } = await listAssistantRuns(deps.ds, caller, params.assistant_id, page, query.status);
    return { status: 200, body: { assistant_runs: items.map(present), pagination } };
  },
});

route({
  operationId: 'GetAssistantRun',
  method: 'get',
  path: '/assistant-runs/{assistant_run_id}',
  tag: TAG,
  params: runPath,
  summary: 'An assistant run.',
  responses: { 200: { description: 'Run', schema: AssistantRunSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await findAssistantRun(deps.ds, caller, params.assistant_run_id)),
  }),
});

route({
  operationId: 'CancelAssistantRun',
  method: 'post',
  path: '/assistant-runs/{assistant_run_id}/cancel',
  tag: TAG,
  params: runPath,
  summary:
    "Aborts the model stream (no further tokens are read) and cancels the run's structure and tool runs; answers once " +
    'the run is CANCELLED (waits up to 10 s, then answers with the current record). 200 again for a CANCELLED run; 409 ' +
    'for a run that ended otherwise.',
  responses: { 200: { description: 'Run', schema: AssistantRunSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await cancelAssistantRun(deps, caller, params.assistant_run_id)),
  }),
});

route({
  operationId: 'ReplayAssistantRun',
  needsDiskSpace: true,
  method: 'post',
  path: '/assistant-runs/{assistant_run_id}/replay',
  tag: TAG,
  params: runPath,
  summary:
    'Runs a finished assistant run again as a new run: the same input, args, model, id lists and thread (as the ' +
    "thread is now); `input`, `args` and `model` may be overridden. The new run's `replayed_from_run_id` names this " +
    'one. 409 while the run is queued or running.',
  body: defineSchema('ReplayAssistantRunRequest', {
    type: 'object',
    properties: {
      args: { type: 'array', items: { type: 'string', maxLength: MAX_INPUT_CHARS }, maxItems: MAX_ARGS },
      input: { type: ['string', 'null'], maxLength: MAX_INPUT_CHARS },
      model: { oneOf: [str(1, 200), { type: 'null' }], description: "`provider/model` instead of the run's." },
    },
  }),
  responses: { 201: { description: 'The new run, QUEUED', schema: AssistantRunSchema } },
  handler: async ({ deps, caller, params, body }) => ({
    status: 201,
    body: present(await replayAssistantRun(deps, caller, params.assistant_run_id, body)),
  }),
  idempotent: replayAnswer,
});

// ---- Events: the same rows, sequence and streams as structure run events, named by assistant_run_id ----

const EventSchema = defineSchema('AssistantRunEvent', {
  type: 'object',
  required: ['event_id', 'assistant_run_id', 'type', 'origin', 'payload', 'timestamp', 'created_at'],
  properties: {
    event_id: uuid,
    assistant_run_id: uuid,
    type: {
      type: 'string',
      description:
        'ASSISTANT (griptape event dicts in `payload`): StartStructureRunEvent, TextChunkEvent and ActionChunkEvent ' +
        '(streamed runs), FinishStructureRunEvent (`payload.output_task_output` is the answer). SYSTEM: StructureRunStarting, ' +
        'StructureRunRunning, AssistantToolCallStarted, AssistantToolCallCompleted, StructureRunCompleted, StructureRunError, ' +
        'StructureRunCancelled.',
    },
    origin: { type: 'string', enum: ['SYSTEM', 'ASSISTANT'] },
    payload: {},
    timestamp: { type: 'number', description: 'Epoch seconds (float).' },
    created_at: timestamp,
  },
});

const presentEvent = (e: RunEvent) => ({
  event_id: e.event_id,
  assistant_run_id: e.run_id,
  type: e.type,
  origin: e.origin,
  payload: e.payload,
  timestamp: e.timestamp,
  created_at: e.created_at.toISOString(),
});

/** One function for every stream: the run's feed renders each event once for all of them. */
const assistantRunFrame = (e: RunEvent) => sseFrame(e, presentEvent);

route({
  operationId: 'ListAssistantEvents',
  method: 'get',
  path: '/assistant-runs/{assistant_run_id}/events',
  tag: 'Events',
  params: runPath,
  summary: `Events of an assistant run in order. ${EVENT_LIST_SUMMARY}`,
  query: eventListQuery,
  responses: { 200: { description: 'Events', schema: eventListSchema('AssistantRunEventList', EventSchema) } },
  handler: async ({ deps, caller, params, query }) => {
    const { run } = await findAssistantRun(deps.ds, caller, params.assistant_run_id);
    return { status: 200, body: await eventListPage(deps.ds, run.run_id, query, presentEvent) };
  },
});

route({
  operationId: 'GetAssistantRunEventsSSE',
  method: 'get',
  path: '/assistant-runs/{assistant_run_id}/events/stream',
  tag: 'Events',
  params: runPath,
  summary:
    'Server-sent events of an assistant run, framed like the structure run stream (`id: <seq>`, `data: <event JSON>`, ' +
    'resume with `Last-Event-ID`, keep-alive comments, the end comment `: end <STATUS>` once the run has ended and all ' +
    'its events were sent, after the `event: end` frame with `?end_event=true`; a response that ends without the end ' +
    'comment means: resume).',
  query: eventStreamQuery,
  responses: { 200: eventStreamResponse('Event stream', EventSchema) },
  handler: async ({ ctx, deps, caller, params, query }) => {
    const { run } = await findAssistantRun(deps.ds, caller, params.assistant_run_id);
    streamRunEvents(ctx, deps, run, resumeAfter(ctx, query.last_event_id), assistantRunFrame, {
      end: query.end_event ? 'frame' : 'comment',
    });
  },
});

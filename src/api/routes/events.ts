// Structure run events: posted by the run's code (CreateEvents, three body shapes), listed with
// limit/offset, read singly, and streamed live (SSE). A run's own credential may use all of these for its run.
import { eventStreamQuery, eventStreamResponse, resumeAfter, streamRunEvents } from '../sse/event-stream';
import {
  createUserEvents,
  eventsOfBody,
  findStructureRunEvent,
  MAX_EVENTS_PER_REQUEST,
  presentEvent,
} from '../../services/code/runs/events';
import { findStructureRun } from '../../services/code/runs/structure-runs';
import { route } from '../http/route';
import { EVENT_LIST_SUMMARY, eventListPage, eventListQuery, eventListSchema } from '../http/event-lists';
import { defineSchema, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Events';

const EventSchema = defineSchema('StructureRunEvent', {
  type: 'object',
  required: ['event_id', 'structure_run_id', 'type', 'origin', 'payload', 'timestamp', 'created_at'],
  properties: {
    event_id: uuid,
    structure_run_id: uuid,
    type: {
      type: 'string',
      description:
        'SYSTEM: StructureRunStarting, StructureRunRunning, StructureRunOutputLost (just before the final event, when output could not be stored), StructureRunCompleted, StructureRunError, StructureRunCancelled. USER: as posted.',
    },
    origin: { type: 'string', enum: ['SYSTEM', 'USER'] },
    payload: {},
    timestamp: { type: 'number', description: 'Epoch seconds (float).' },
    created_at: timestamp,
  },
});

const EventInput = defineSchema('EventInput', {
  type: 'object',
  required: ['type', 'timestamp'],
  properties: {
    type: { ...str(1, 200), description: 'griptape sends the event class name (its own default is UserEvent).' },
    payload: {},
    timestamp: { type: 'number', description: 'Epoch seconds (float).' },
  },
});
const eventArray = { type: 'array', items: EventInput, minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST } as const;

const runPath = { structure_run_id: uuid } as const;

route({
  operationId: 'CreateEvents',
  method: 'post',
  path: '/structure-runs/{structure_run_id}/events',
  tag: TAG,
  runScoped: true,
  summary:
    `Appends USER events to a run that has not ended (409 once it has). The body is one event \`{type, payload?, timestamp}\`, ` +
    `a JSON list of them, or \`{events: [...]}\`; at most ${MAX_EVENTS_PER_REQUEST} per request. ` +
    "A FinishStructureRunEvent sets the run's `output` (from `payload.output_task_output`) and `output_timestamp`.",
  params: runPath,
  body: defineSchema('CreateEventsRequest', {
    oneOf: [EventInput, eventArray, { type: 'object', required: ['events'], properties: { events: eventArray } }],
  }),
  bodyRequired: true,
  idempotentAddition: true,
  responses: { 202: { description: 'Stored (empty body); with a repeated Idempotency-Key, nothing stored again' } },
  handler: async ({ deps, caller, params, body, claim }) => {
    const { stored } = await createUserEvents(deps.ds, caller, params.structure_run_id, eventsOfBody(body), claim);
    return { status: 202, body: '', replayed: !stored }; // without a body Koa would send the status text
  },
});

route({
  operationId: 'ListEvents',
  method: 'get',
  path: '/structure-runs/{structure_run_id}/events',
  tag: TAG,
  runScoped: true,
  summary: `Events of a run in order. ${EVENT_LIST_SUMMARY}`,
  params: runPath,
  query: eventListQuery,
  responses: { 200: { description: 'Events', schema: eventListSchema('StructureRunEventList', EventSchema) } },
  handler: async ({ deps, caller, params, query }) => {
    const run = await findStructureRun(deps.ds, caller, params.structure_run_id);
    return { status: 200, body: await eventListPage(deps.ds, run.run_id, query, presentEvent) };
  },
});

route({
  operationId: 'GetEvent',
  method: 'get',
  path: '/events/{event_id}',
  tag: TAG,
  runScoped: true,
  summary: 'One structure run event.',
  params: { event_id: uuid },
  responses: { 200: { description: 'Event', schema: EventSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentEvent(await findStructureRunEvent(deps.ds, caller, params.event_id)),
  }),
});

route({
  operationId: 'GetStructureRunEventsSSE',
  method: 'get',
  path: '/structure-runs/{structure_run_id}/events/stream',
  tag: TAG,
  runScoped: true,
  summary:
    'Server-sent events: one `id: <seq>` / `data: <event JSON>` frame per event, in order, from the start or after ' +
    'the `Last-Event-ID` header (or `?last_event_id=`); `: keep-alive` comments every SSE_KEEPALIVE_MS (15 s). Once ' +
    'the run has ended and all its events were sent, the comment `: end <STATUS>` (the final status) and the end of ' +
    'the response; with `?end_event=true`, an `event: end` frame (StreamEnd, no `id`) just before that comment. A ' +
    'response that ends without the end comment means: resume with `Last-Event-ID`.',
  params: runPath,
  query: eventStreamQuery,
  responses: { 200: eventStreamResponse('Event stream', EventSchema) },
  handler: async ({ ctx, deps, caller, params, query }) => {
    const run = await findStructureRun(deps.ds, caller, params.structure_run_id);
    streamRunEvents(ctx, deps, run, resumeAfter(ctx, query.last_event_id), undefined, {
      end: query.end_event ? 'frame' : 'comment',
    });
  },
});

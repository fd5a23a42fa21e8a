// Spans of structure runs: posted by griptape's GriptapeCloudObservabilityDriver (a JSON list per batch; it
// counts only 200 as success), listed by start time. A run's own credential may use both for its run.
import {
  createSpans,
  listSpans,
  MAX_SPAN_BYTES_PER_RUN,
  MAX_SPANS_PER_REQUEST,
  MAX_SPANS_PER_RUN,
} from '../../services/code/runs/spans';
import { route } from '../http/route';
import { defineSchema, pageOf, str, uuid } from '../schemas/registry';

const TAG = 'Spans';
const runPath = { structure_run_id: uuid };
const isoTime = { type: 'string', format: 'date-time' };
const attributes = { type: 'object', default: {}, description: 'OpenTelemetry attributes, as sent.' };

const spanProperties = {
  trace_id: { ...str(1, 64), description: 'The driver sends OpenTelemetry ids formatted as UUIDs (not v4).' },
  span_id: str(1, 64),
  parent_id: { oneOf: [str(1, 64), { type: 'null' }] },
  name: str(1, 1000),
  start_time: isoTime,
  end_time: { oneOf: [isoTime, { type: 'null' }], default: null },
  status: { type: 'string', enum: ['UNSET', 'OK', 'ERROR'], default: 'UNSET' },
  attributes,
  events: {
    type: 'array',
    default: [],
    items: {
      type: 'object',
      required: ['name', 'timestamp'],
      properties: { name: str(1, 1000), timestamp: { oneOf: [isoTime, { type: 'null' }] }, attributes },
    },
  },
};

/** As posted: what the driver always sends is required; the rest gets its default. */
const SpanInput = defineSchema('SpanInput', {
  type: 'object',
  required: ['trace_id', 'span_id', 'name', 'start_time'],
  properties: spanProperties,
});
/** As listed: the posted span with its defaults. */
const SpanSchema = defineSchema('Span', {
  type: 'object',
  required: ['trace_id', 'span_id', 'name', 'start_time', 'end_time', 'status', 'attributes', 'events'],
  properties: spanProperties,
});

route({
  operationId: 'CreateSpans',
  method: 'post',
  path: '/structure-runs/{structure_run_id}/spans',
  tag: TAG,
  runScoped: true,
  summary:
    `Stores spans of a run (any status: exporters flush late): a JSON list of at most ${MAX_SPANS_PER_REQUEST}. A run keeps at most ` +
    `${MAX_SPANS_PER_RUN} spans and ${MAX_SPAN_BYTES_PER_RUN / 1024 / 1024} MiB of them; a batch past either is refused whole (413).`,
  params: runPath,
  body: defineSchema('CreateSpansRequest', { type: 'array', items: SpanInput, maxItems: MAX_SPANS_PER_REQUEST }),
  bodyRequired: true,
  responses: {
    200: {
      description: 'Stored',
      schema: defineSchema('CreateSpansResponse', {
        type: 'object',
        required: ['count', 'total_count'],
        properties: {
          count: { type: 'integer', description: 'Spans stored by this request.' },
          total_count: { type: 'integer', description: 'Spans the run has now.' },
        },
      }),
    },
  },
  handler: async ({ deps, caller, params, body }) => {
    const total = await createSpans(deps.ds, caller, params.structure_run_id, body);
    return { status: 200, body: { count: body.length, total_count: total } };
  },
});

route({
  operationId: 'ListSpans',
  method: 'get',
  path: '/structure-runs/{structure_run_id}/spans',
  tag: TAG,
  paged: true,
  runScoped: true,
  summary:
    'The spans of a run in the order of their `start_time` (those starting together in the order they were posted), as posted.',
  params: runPath,
  responses: { 200: { description: 'Spans', schema: pageOf('SpanList', 'spans', SpanSchema) } },
  handler: async ({ deps, caller, params, page }) => {
    const { items, pagination } = await listSpans(deps.ds, caller, params.structure_run_id, page);
    return { status: 200, body: { spans: items, pagination } };
  },
});

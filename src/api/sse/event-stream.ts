// The SSE response of a run's events: `id: <seq>` + `data: <event JSON>` frames from `afterSeq` on, a
// keep-alive comment now and then, and, once the run is terminal and every event up to then has been sent,
// the end comment (`: end <STATUS>`, which line readers skip: every `data:` line stays a full event) and the end
// of the response; a client that asks (`?end_event=true`) also gets the end frame (`event: end`, the final
// status; no `id`, so it is outside the event sequence) just before the end comment. A response that ends without
// the end comment (the api went away, the client fell too far behind) means: resume with `Last-Event-ID`. The
// events come from the process's one reader of the run (run-feeds.ts), woken by the hub (LISTEN/NOTIFY) and by a
// periodic re-check.
import type { Context } from 'koa';
import type { Run, RunEvent } from '../../persistence/entities';
import { RUN_TERMINAL, RunStatus } from '../../persistence/entities/run';
import { presentEvent } from '../../services/code/runs/events';
import { FeedStream, RunFeeds } from './run-feeds';
import { openSse } from './sse-response';
import { admitStream } from './stream-quota';
import type { Deps } from '../deps';
import { badRequest } from '../../errors';
import type { ResponseSpec } from '../http/route';
import { defineSchema, JsonSchema } from '../schemas/registry';

/** The `data` of a stream's end frame (sent only with `?end_event=true`): the run's final status, with `type`,
 * `origin` and `payload` as a SYSTEM event of its own type, for a client that reads it as one. */
export const StreamEndData = defineSchema('StreamEnd', {
  type: 'object',
  required: ['status', 'type', 'origin', 'payload'],
  properties: {
    status: { type: 'string', enum: [...RUN_TERMINAL], description: 'The status the run ended in.' },
    type: { type: 'string', enum: ['StreamEnd'] },
    origin: { type: 'string', enum: ['SYSTEM'] },
    payload: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', enum: [...RUN_TERMINAL] } },
    },
  },
});

/** The end frame of a run's stream, after its last event: `event: end`, no `id` (Last-Event-ID stays the last event's). */
export const sseEndFrame = (status: RunStatus) =>
  `event: end\ndata: ${JSON.stringify({ status, type: 'StreamEnd', origin: 'SYSTEM', payload: { status } })}\n\n`;

/** The last line of a run's stream before the close, after every event: a comment, which line readers skip. */
export const sseEndComment = (status: RunStatus) => `: end ${status}\n\n`;

/**
 * The response of an event stream. OpenAPI 3.1 (and schemathesis) read the `schema` of `text/event-stream` as
 * the schema of each event: `{data, id?, event}` with `data` the JSON text of `data` (keep-alive comments are
 * no events, and neither is the end comment). `frames`: `resumable` frames carry `id: <seq>` and the stream ends
 * with the end comment, after the end frame when asked (`event: end`, `?end_event=true`; its parsed `id` is the
 * last event's, which SSE keeps until another is sent); `open-ended` frames carry an id but the stream has no
 * end; `plain` frames have neither.
 */
export function eventStreamResponse(
  description: string,
  data: JsonSchema,
  frames: 'resumable' | 'open-ended' | 'plain' = 'resumable',
): ResponseSpec {
  const withId = frames !== 'plain';
  const id = { type: 'string', pattern: '^[0-9]+$' };
  const eventFrame = {
    type: 'object',
    required: ['data', ...(withId ? ['id'] : [])],
    properties: {
      data: { type: 'string', contentMediaType: 'application/json', contentSchema: data },
      ...(withId ? { id } : {}),
      event: { type: 'string', enum: ['message'] },
    },
  };
  const endFrame = {
    type: 'object',
    required: ['data', 'event'],
    properties: {
      data: { type: 'string', contentMediaType: 'application/json', contentSchema: StreamEndData },
      id,
      event: { type: 'string', enum: ['end'] },
    },
  };
  return {
    description:
      `${description}. Each event: \`data\` is JSON${withId ? ', `id` its sequence number' : ''}` +
      (frames === 'resumable'
        ? '. Every `data` is a full event. Once the run has ended and every event was sent, the comment ' +
          '`: end <STATUS>` (the final status), then the response ends; with `?end_event=true` the frame ' +
          '`event: end` (StreamEnd) comes just before that comment. A response that ends without the end comment ' +
          'means: resume with `Last-Event-ID`.'
        : '.'),
    contentType: 'text/event-stream',
    schema: frames === 'resumable' ? { oneOf: [eventFrame, endFrame] } : eventFrame,
  };
}

/** Event sequence numbers in `Last-Event-ID` and `?last_event_id=`: up to 15 digits. */
const MAX_EVENT_SEQ = 999_999_999_999_999;

/** The `?last_event_id=` query parameter of the event streams. */
const lastEventIdQuery = {
  last_event_id: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_EVENT_SEQ,
    description: 'Resume after this event sequence number (the `id:` of a frame); the `Last-Event-ID` header wins.',
  },
} as const;

/** The query of a run's event stream: where it resumes, and whether the client wants the end frame. */
export const eventStreamQuery = {
  ...lastEventIdQuery,
  end_event: {
    type: 'boolean',
    description:
      'true: the `event: end` frame (StreamEnd, the final status) before the end comment. Off by default: clients ' +
      'that read every `data:` line as an event would parse it as one.',
  },
} as const;

/**
 * Where a stream resumes: after the `Last-Event-ID` header's sequence (up to `maxDigits` digits), else
 * `?last_event_id=`, else from the start.
 */
export function resumeAfter(ctx: Context, lastEventIdQuery: number | undefined, maxDigits = 15): number {
  const header = ctx.get('last-event-id').trim();
  if (header !== '' && !new RegExp(`^\\d{1,${maxDigits}}$`).test(header))
    throw badRequest('Last-Event-ID must be the id of a frame (an integer)', '/header/last-event-id');
  return header !== '' ? Number(header) : (lastEventIdQuery ?? 0);
}

/** The frame of one event: its sequence as the id, the event as the clients' EventDetail JSON. */
export const sseFrame = (e: RunEvent, present: (e: RunEvent) => unknown = presentEvent) =>
  `id: ${e.seq}\ndata: ${JSON.stringify(present(e))}\n\n`;

/** The default frame: one function, so that the feed renders each event once for all such streams. */
const structureRunFrame = (e: RunEvent) => sseFrame(e);

/**
 * Sets up the response of `ctx` as the event stream of `runId`, starting after sequence `afterSeq`.
 * `frame` renders each event (structure run events by default; an empty string skips the event); pass the
 * same function for every stream of a shape. `status`: of the response (200 by default; a stream that
 * creates what it streams answers 201). `end`: how the stream says it ended, after the last event: `comment`
 * (the default), `frame` (the end frame, then the comment: the client asked with `?end_event=true`) or `none`
 * (a stream that is not resumable, whose clients read every `data:` line as their own shape). `admitted`: the release of a place the route took with admitStream before it created
 * the run (else the stream takes its own, or answers 429). The events come from the process's shared feed of the run.
 */
export function streamRunEvents(
  ctx: Context,
  deps: Deps,
  run: Pick<Run, 'run_id' | 'organization_id'>,
  afterSeq: number,
  frame: (e: RunEvent) => string = structureRunFrame,
  {
    status = 200,
    end = 'comment',
    admitted,
  }: { status?: number; end?: 'comment' | 'frame' | 'none'; admitted?: () => void } = {},
): void {
  const runId = run.run_id;
  const release = admitted ?? admitStream(ctx, deps, run.organization_id);
  let detach = () => undefined as void;
  const sse = openSse(ctx, {
    status,
    comment: `events of run ${runId}`,
    onEnd: () => {
      detach();
      release();
    },
  });
  const stream: FeedStream = {
    cursor: afterSeq,
    frame,
    write: sse.write,
    end: (finalStatus) => sse.end(finalStatus && end !== 'none' ? endOfStream(finalStatus, end) : undefined),
  };
  detach = runFeedsOf(deps).attach(runId, stream);
}

/** What a stream sends after its last event: the end frame when asked, and the end comment. */
const endOfStream = (status: RunStatus, end: 'comment' | 'frame') =>
  (end === 'frame' ? sseEndFrame(status) : '') + sseEndComment(status);

const feedsByDeps = new WeakMap<Deps, RunFeeds>();

/** The feeds of the api process that `deps` belongs to. */
function runFeedsOf(deps: Deps): RunFeeds {
  let feeds = feedsByDeps.get(deps);
  if (!feeds) {
    feeds = new RunFeeds(deps.ds, deps.log, deps.runUpdates, deps.config.sse);
    feedsByDeps.set(deps, feeds);
  }
  return feeds;
}

// The SSE response of a run's events: `id: <seq>` + `data: <event JSON>` frames from `afterSeq` on, a
// keep-alive comment now and then, and the end of the response once the run is terminal and every event
// up to then has been sent. Woken by the hub (LISTEN/NOTIFY) and by a periodic re-check.
import type { Context } from 'koa';
import type { RunEvent } from '../../persistence/entities';
import type { RunStatus } from '../../persistence/entities/run';
import { eventsAfter, presentEvent } from '../../services/runs/events';
import { isTerminal } from '../../services/runs/lifecycle';
import type { Deps } from '../deps';
import { badRequest } from '../../errors';
import type { ResponseSpec } from '../http/route';
import type { JsonSchema } from '../schemas/registry';

/** Events read per query while catching up. */
const BATCH = 500;

/**
 * The response of an event stream. OpenAPI 3.1 (and schemathesis) read the `schema` of `text/event-stream` as
 * the schema of each event: `{data, id?, event}` with `data` the JSON text of `data` (keep-alive comments are
 * no events). `withId`: frames carry `id: <seq>` (resumable streams).
 */
export function eventStreamResponse(description: string, data: JsonSchema, withId = true): ResponseSpec {
  return {
    description: `${description}. Each event: \`data\` is JSON${withId ? ', `id` its sequence number' : ''}.`,
    contentType: 'text/event-stream',
    schema: {
      type: 'object',
      required: ['data', ...(withId ? ['id'] : [])],
      properties: {
        data: { type: 'string', contentMediaType: 'application/json', contentSchema: data },
        ...(withId ? { id: { type: 'string', pattern: '^[0-9]+$' } } : {}),
        event: { type: 'string', enum: ['message'] },
      },
    },
  };
}

/** Event sequence numbers in `Last-Event-ID` and `?last_event_id=`: up to 15 digits. */
const MAX_EVENT_SEQ = 999_999_999_999_999;

/** The `?last_event_id=` query parameter of the event streams. */
export const lastEventIdQuery = {
  last_event_id: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_EVENT_SEQ,
    description: 'Resume after this event sequence number (the `id:` of a frame); the `Last-Event-ID` header wins.',
  },
};

/** Where a stream resumes: after the `Last-Event-ID` header's sequence, else `?last_event_id=`, else from the start. */
export function resumeAfter(ctx: Context, lastEventIdQuery: number | undefined): number {
  const header = ctx.get('last-event-id').trim();
  if (header !== '' && !/^\d{1,15}$/.test(header))
    throw badRequest('Last-Event-ID must be the id of a frame (an integer)', '/header/last-event-id');
  return header !== '' ? Number(header) : (lastEventIdQuery ?? 0);
}

/** The frame of one event: its sequence as the id, the event as the clients' EventDetail JSON. */
export const sseFrame = (e: RunEvent, present: (e: RunEvent) => unknown = presentEvent) =>
  `id: ${e.seq}\ndata: ${JSON.stringify(present(e))}\n\n`;

/**
 * Sets up the response of `ctx` as the event stream of `runId`, starting after sequence `afterSeq`.
 * `frame` renders each event (structure run events by default; an empty string skips the event).
 * `status`: of the response (200 by default; a stream that creates what it streams answers 201).
 */
export function streamRunEvents(
  ctx: Context,
  deps: Deps,
  runId: string,
  afterSeq: number,
  frame: (e: RunEvent) => string = (e) => sseFrame(e),
  { status = 200 }: { status?: number } = {},
): void {
  const { ds, runUpdates, config, log } = deps;
  // The stream is written to the socket directly: Koa's body piping would report every client that
  // disconnects as an error.
  const out = ctx.res;
  let lastSeq = afterSeq;
  let closed = false;
  let pumping = false;
  let again = false;

  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    clearInterval(recheck);
    unsubscribe();
    out.end();
  };

  const write = async (text: string) => {
    // A slow reader holds us here rather than filling memory.
    if (closed) return;
    if (out.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
    });
  };

  // Status first, then events: a status seen terminal here was committed together with its last event,
  // so the events read afterwards include everything the run will ever have.
  const pump = async () => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        const rows: Array<{ status: RunStatus }> = await ds.query(`SELECT status FROM runs WHERE run_id = $1`, [runId]);
        const batch = await eventsAfter(ds, runId, lastSeq, BATCH);
        for (const e of batch) {
          if (closed) return;
          const text = frame(e);
          if (text) await write(text);
          lastSeq = e.seq;
        }
        if (batch.length === BATCH) again = true;
        else if (!rows.length || isTerminal(rows[0].status)) return end();
      } while (again && !closed);
    } catch (err) {
      log.warn({ err, runId }, 'event stream read failed; retrying on the next wake-up');
    } finally {
      pumping = false;
    }
  };

  const unsubscribe = runUpdates?.subscribe(runId, { update: () => void pump(), close: end }) ?? (() => undefined);
  const keepAlive = setInterval(() => void write(': keep-alive\n\n'), config.sse.keepAliveMs);
  const recheck = setInterval(() => void pump(), config.sse.recheckMs);
  out.on('close', end);
  out.on('error', end);

  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = status; // for the request log; the response itself is ours
  ctx.respond = false;
  out.writeHead(status, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no', // nginx: do not buffer the stream
  });
  // Sends the headers at once, so clients see the 200 before the first event.
  out.write(`: events of run ${runId}\n\n`);
  void pump();
}

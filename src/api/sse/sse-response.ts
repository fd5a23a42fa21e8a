// The response of a server-sent event stream, written to the socket directly (Koa's body piping would report
// every client that disconnects as an error): the headers at once, frames as they come, and the end. A client
// that does not read (more than MAX_BUFFERED_BYTES waiting) is dropped; it resumes with Last-Event-ID.
import type { Context } from 'koa';
import { sseConnections, sseConnectionsOpened } from '../../observability/metrics';

/** A client with this much unread in its socket buffer is dropped (it resumes with Last-Event-ID). */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface SseResponse {
  /** Writes `text`; false when the stream has ended (or was ended now: the client is too slow). */
  write(text: string): boolean;
  /** Writes `last` (if given) and ends the response; then `onEnd`. Once. */
  end(last?: string): void;
}

/**
 * Answers `ctx` with an event stream: `status`, the SSE headers and a first comment (`: <comment>`), so
 * clients see the answer before the first frame. `onEnd` runs once the stream ends, by either side.
 */
export function openSse(ctx: Context, o: { status: number; comment: string; onEnd: () => void }): SseResponse {
  const out = ctx.res;
  let closed = false;
  const sse: SseResponse = {
    write: (text) => {
      if (closed) return false;
      if (out.writableLength > MAX_BUFFERED_BYTES) {
        // A client this far behind would hold every frame in memory: it resumes with Last-Event-ID instead.
        sse.end();
        return false;
      }
      out.write(text);
      return true;
    },
    end: (last) => {
      if (closed) return;
      closed = true;
      sseConnections.dec();
      o.onEnd();
      if (last) out.write(last);
      out.end();
    },
  };
  sseConnections.inc();
  sseConnectionsOpened.inc();
  out.on('close', () => sse.end());
  out.on('error', () => sse.end());

  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.status = o.status; // for the request log; the response itself is ours
  ctx.respond = false;
  out.writeHead(o.status, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no', // nginx: do not buffer the stream
  });
  out.write(`: ${o.comment}\n\n`);
  return sse;
}

// A minimal SSE client for tests: reads frames until the server ends the response (or `stopAfter` frames).
export interface SseFrame {
  id: number;
  data: any;
  /** Date.now() when the frame arrived. */
  at: number;
}

export interface SseRead {
  status: number;
  /** The JSON body of a response that is no stream (an error). */
  body?: any;
  contentType: string;
  frames: SseFrame[];
  comments: string[];
  /** True when the server ended the response; false when we stopped reading. */
  ended: boolean;
  /** The final status the end comment (`: end <STATUS>`, after every event) named, when the stream sent one. */
  end?: string;
  /** The `data` of the end frame (`event: end`), when the stream sent one (asked for with `?end_event=true`). */
  endEvent?: any;
  /** Frames that came after the end frame or the end comment (there must be none). */
  afterEnd: number;
}

/**
 * A block of an SSE body: an event frame (`id`, JSON `data`), the end frame (`event: end`), the end comment
 * (`: end <STATUS>`: `end` is the status), or other comment lines.
 */
export type SseBlock = { id: number; data: any } | { endEvent: any } | { end: string } | { comments: string[] };

const END_COMMENT = /^end ([A-Z]+)$/;

/** The blocks of an SSE body as they arrive. */
export async function* sseBlocks(body: ReadableStream<Uint8Array>): AsyncGenerator<SseBlock> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffered.indexOf('\n\n')) >= 0) {
        const fields = buffered.slice(0, cut).split('\n');
        buffered = buffered.slice(cut + 2);
        if (fields.every((l) => l.startsWith(':'))) {
          const comments = fields.map((l) => l.slice(1).trim());
          const end = comments.length === 1 ? END_COMMENT.exec(comments[0]) : null;
          yield end ? { end: end[1] } : { comments };
          continue;
        }
        const data = JSON.parse(
          fields
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n'),
        );
        const event = fields.find((l) => l.startsWith('event: '))?.slice(7);
        if (event === 'end') yield { endEvent: data };
        else if (event !== undefined) throw new Error(`unexpected SSE event type ${event}`);
        else yield { id: Number(fields.find((l) => l.startsWith('id: '))?.slice(4)), data };
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** Reads the stream of `url` (GET, or POST of `opts.body` as JSON: streams that answer a request). */
export async function readSse(
  url: string,
  key: string,
  opts: { lastEventId?: number; stopAfter?: number; body?: unknown } = {},
): Promise<SseRead> {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId);
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    headers,
    signal: abort.signal,
    ...(opts.body !== undefined ? { method: 'POST', body: JSON.stringify(opts.body) } : {}),
  });
  const out: SseRead = {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    frames: [],
    comments: [],
    ended: false,
    afterEnd: 0,
  };
  if (!out.contentType.startsWith('text/event-stream')) {
    const text = await res.text();
    out.body = out.contentType.includes('application/json') && text ? JSON.parse(text) : text;
    return out;
  }
  if (!res.body) return out;
  for await (const block of sseBlocks(res.body)) {
    if ('comments' in block) {
      out.comments.push(...block.comments);
      continue;
    }
    if ('end' in block) {
      out.end = block.end;
      continue;
    }
    if ('endEvent' in block) {
      if (out.end !== undefined) out.afterEnd++;
      out.endEvent = block.endEvent;
      continue;
    }
    if (out.end !== undefined || out.endEvent !== undefined) out.afterEnd++;
    out.frames.push({ ...block, at: Date.now() });
    if (opts.stopAfter !== undefined && out.frames.length >= opts.stopAfter) {
      abort.abort();
      return out;
    }
  }
  out.ended = true;
  return out;
}

/** The members every client's EventDetail requires, with their JSON types (`payload`: present, any value). */
const EVENT_DETAIL_MEMBERS = {
  event_id: 'string',
  type: 'string',
  origin: 'string',
  timestamp: 'number',
  created_at: 'string',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Reads a run's event stream body as the interface's clients do (line by line; every line but `data:` skipped)
 * and parses each `data:` line strictly as an EventDetail of run `runId` (`runIdKey`: `structure_run_id` or
 * `assistant_run_id`): every required member present with its type, the run's id. Throws naming the first
 * line that is not one; answers the events.
 */
export function strictEventDetails(raw: string, runIdKey: 'structure_run_id' | 'assistant_run_id', runId: string) {
  const lines = raw.split(/\r\n|\r|\n/).filter((l) => l.startsWith('data:'));
  return lines.map((line) => {
    const fail = (why: string) => new Error(`not an EventDetail (${why}): ${line.slice(0, 300)}`);
    let event: any;
    try {
      event = JSON.parse(line.slice(5));
    } catch {
      throw fail('no JSON');
    }
    if (event === null || typeof event !== 'object' || Array.isArray(event)) throw fail('no object');
    for (const [member, type] of Object.entries(EVENT_DETAIL_MEMBERS))
      if (typeof event[member] !== type) throw fail(`${member} is no ${type}`);
    if (!('payload' in event)) throw fail('no payload');
    if (!UUID.test(event.event_id)) throw fail('event_id is no uuid');
    if (Number.isNaN(Date.parse(event.created_at))) throw fail('created_at is no time');
    if (event[runIdKey] !== runId) throw fail(`${runIdKey} is not ${runId}`);
    return event;
  });
}

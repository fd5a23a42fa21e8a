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
  /** The `data` of the end frame (`event: end`, the run's final status), when the stream sent one. */
  end?: any;
  /** Frames that came after the end frame (there must be none). */
  afterEnd: number;
}

/** A block of an SSE body: an event frame (`id`, JSON `data`), the end frame (`event: end`), or comment lines. */
export type SseBlock = { id: number; data: any } | { end: any } | { comments: string[] };

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
          yield { comments: fields.map((l) => l.slice(1).trim()) };
          continue;
        }
        const data = JSON.parse(
          fields
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n'),
        );
        const event = fields.find((l) => l.startsWith('event: '))?.slice(7);
        if (event === 'end') yield { end: data };
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
    if (out.end !== undefined) out.afterEnd++;
    out.frames.push({ ...block, at: Date.now() });
    if (opts.stopAfter !== undefined && out.frames.length >= opts.stopAfter) {
      abort.abort();
      return out;
    }
  }
  out.ended = true;
  return out;
}

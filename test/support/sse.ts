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
}

/** Reads the stream of `url` (GET, or POST of `opts.body` as JSON: streams that answer a request). */
export async function readSse(
  url: string, key: string, opts: { lastEventId?: number; stopAfter?: number; body?: unknown } = {},
): Promise<SseRead> {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId);
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    headers, signal: abort.signal, ...(opts.body !== undefined ? { method: 'POST', body: JSON.stringify(opts.body) } : {}),
  });
  const out: SseRead = { status: res.status, contentType: res.headers.get('content-type') ?? '', frames: [], comments: [], ended: false };
  if (!out.contentType.startsWith('text/event-stream')) {
    const text = await res.text();
    out.body = out.contentType.includes('application/json') && text ? JSON.parse(text) : text;
    return out;
  }
  if (!res.body) return out;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      out.ended = true;
      return out;
    }
    buffered += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const fields = block.split('\n');
      if (fields.every((l) => l.startsWith(':'))) {
        out.comments.push(...fields.map((l) => l.slice(1).trim()));
        continue;
      }
      const id = Number(fields.find((l) => l.startsWith('id: '))?.slice(4));
      const data = JSON.parse(fields.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'));
      out.frames.push({ id, data, at: Date.now() });
      if (opts.stopAfter !== undefined && out.frames.length >= opts.stopAfter) {
        abort.abort();
        await reader.cancel().catch(() => undefined);
        return out;
      }
    }
  }
}

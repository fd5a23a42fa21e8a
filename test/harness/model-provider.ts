/**
 * A local OpenAI-compatible model provider for tests (node:http), speaking the real wire protocol:
 * POST /v1/chat/completions as JSON or as SSE (`data: {chunk}\n\n` ... `data: [DONE]\n\n`, tool calls streamed
 * the way OpenAI does: id and name first, then argument fragments; usage in a last chunk with `choices: []`
 * when `stream_options.include_usage`), errors as `{error: {message, type, param, code}}`, and GET /v1/models.
 * Answers are scripted; every request is recorded, with whether the client went away mid-answer.
 * POST /v1/embeddings answers any model with deterministic vectors (OpenAI's wire format): a hashed bag of
 * words (lower-cased words of letters and digits, each adding 1 to one of EMBEDDING_DIMENSIONS components),
 * L2-normalized, so texts sharing words are close in cosine distance. `stallEmbeddings(model)` makes
 * embedding requests for `model` wait until the client leaves (cancellation tests); `failEmbeddings(model,
 * {status, message, times?, containing?, retryAfterSeconds?})` answers the next `times` requests for `model`
 * (whose input holds `containing`, when given) with that HTTP error in OpenAI's error body, with a
 * `retry-after` header in seconds when given (else `retry-after-ms: 0` for retryable statuses, like chat
 * errors), until `recoverEmbeddings(model)`; `embeddingRequests` records every embeddings request body with its arrival time and status.
 *
 *   const provider = await startModelProvider();      // the stack runs one: getStack().modelProvider,
 *                                                      // configured as provider `local` (see stack.ts)
 *   const model = provider.uniqueModel();             // a fresh model name: scripts for it touch no other test
 *   provider.script({ model, text: 'Hello there' });  // queued; each reply answers one request for `model`
 *   provider.script(
 *     { model, toolCalls: [{ name: 'add', arguments: '{"a":1,"b":2}' }] },     // finish_reason tool_calls
 *     { model, respond: (body) => ({ text: `saw ${body.messages.length} messages` }) },
 *     { model, error: { status: 500, message: 'boom' }, times: 3 },              // 3 requests (retries)
 *     { model, text: 'one two three four', stallAfterChunks: 2 },               // then silent until the client leaves
 *     { model, text: 'never sent', stallBeforeAnswer: true },                    // silent (JSON or SSE) until the client leaves
 *   );
 *   provider.script({ model: 'test-model', asked: 'hi', text: 'Hello' });  // only a request whose last message says "hi"
 *   const req = await provider.waitForRequest(model);  // the 1st request for `model` (2nd: waitForRequest(model, 2))
 *   req.body; req.stream; await req.stalled; expect(await req.ended).to.equal('disconnected');
 *   provider.requestsFor(model); provider.unused(model);  // recorded requests; replies not taken yet
 *   provider.withdraw(reply);                          // takes scripted replies out of the queue, used or not
 *   await provider.close();
 *
 * Matching: a reply with `model` answers only requests whose body `model` is that name (the part after
 * `provider/`); one without answers any request. Replies are taken in script order. A request no reply matches
 * gets a 400 `invalid_request_error` naming its model, which the driver reports as `rejected`.
 * Chunk counts (`stallAfterChunks`, `dropAfterChunks`, `chunksSent`) count every `data:` event, the first being
 * the `role: assistant` chunk. Default usage: prompt_tokens = words in the request's messages,
 * completion_tokens = streamed pieces (text pieces + tool-call pieces). Retryable errors (408, 409, 429, 5xx)
 * carry `retry-after-ms: 0` unless `retryAfterMs` says otherwise, so the client's retries take no time.
 * Message contents are checked as OpenAI checks them (content-parts.ts: text, image_url, input_audio, video_url
 * parts; media in user messages only): a request that breaks them gets OpenAI's 400 with the `param` at fault,
 * before any scripted reply is taken; `contentParts(req.body.messages)` lists what a request carried.
 */
import http from 'node:http';
import type net from 'node:net';
import { randomUUID } from 'node:crypto';
import { contentProblem, textWords } from './content-parts';

/** The request body as sent (OpenAI chat.completions create parameters). */
export type ChatRequestBody = Record<string, any> & { model: string; messages: Array<Record<string, any>> };

/** The text of a request's last message: its string content, or its text parts joined. */
function lastMessageText(body: ChatRequestBody): string {
  const content = body.messages.at(-1)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
}

export interface ScriptedAnswer {
  /** Answer text; streamed word by word (with the following whitespace) unless `chunks` gives the pieces. */
  text?: string;
  chunks?: string[];
  /** Tool calls; `id` defaults to `call_<random>`, streamed arguments in pieces of 8 characters unless `argumentChunks`. */
  toolCalls?: Array<{ id?: string; name: string; arguments: string; argumentChunks?: string[] }>;
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** `null`: report no usage at all. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** Answer with this HTTP error instead (OpenAI's error body). */
  error?: { status: number; message: string; type?: string; code?: string | null; retryAfterMs?: number | null };
  /** Streaming: after this many chunks, send nothing more and keep the response open until the client leaves. */
  stallAfterChunks?: number;
  /** Send nothing at all (no headers, JSON or stream) and keep the request open until the client leaves. */
  stallBeforeAnswer?: boolean;
  /** Streaming: destroy the connection after this many chunks (a provider crashing mid-answer). */
  dropAfterChunks?: number;
  /** Streaming: an `{"error": {...}}` data event after this many chunks, then the stream ends (vLLM does this). */
  streamErrorAfterChunks?: { chunks: number; message: string };
  /** Streaming: wait this long before each chunk. */
  chunkDelayMs?: number;
}

export interface ScriptedReply extends ScriptedAnswer {
  /** Only requests for this model (the body's `model`) take this reply. */
  model?: string;
  /** Only requests whose last message's text contains this take this reply: a test scripting the shared
   *  `test-model` (runs that name no model) takes only its own run's request, never a leftover run's. */
  asked?: string;
  /** How many requests this reply answers (default 1; Infinity: all of them). */
  times?: number;
  /** Computes the answer from the request (then the other answer fields of this reply are ignored). */
  respond?: (body: ChatRequestBody) => ScriptedAnswer;
}

export type Outcome = 'completed' | 'disconnected';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body (undefined for GET). */
  body: ChatRequestBody;
  model: string;
  stream: boolean;
  /** `data:` events (streaming) sent so far. */
  chunksSent: number;
  /** Resolves when a `stallAfterChunks` stream has sent its chunks and waits, or a `stallBeforeAnswer` reply waits (never otherwise). */
  stalled: Promise<void>;
  /** Resolves once the exchange is over: the whole answer was sent, or the client went away before. */
  ended: Promise<Outcome>;
  outcome?: Outcome;
}

export interface ModelProvider {
  /** `http://127.0.0.1:<port>/v1`: the base URL to configure (MODEL_PROVIDERS=local=<baseUrl>). */
  baseUrl: string;
  /** Every request, in arrival order. */
  requests: RecordedRequest[];
  script(...replies: ScriptedReply[]): void;
  uniqueModel(label?: string): string;
  requestsFor(model: string): RecordedRequest[];
  /** Resolves with the `nth` (1-based) request for `model` (any model when undefined) once it has arrived. */
  waitForRequest(model?: string, nth?: number): Promise<RecordedRequest>;
  /** Scripted replies not (fully) used yet. */
  unused(model?: string): ScriptedReply[];
  /** Removes these replies (the objects given to `script`) from the queue. */
  withdraw(...replies: ScriptedReply[]): void;
  /** Bodies of POST /v1/embeddings, in arrival order, with when they arrived and the status answered. */
  embeddingRequests: EmbeddingRequestRecord[];
  /** Embedding requests for `model` get no answer until the client goes away. */
  stallEmbeddings(model: string): void;
  /** The next `times` (default 1; Infinity: all) embedding requests for `model` get this error. */
  failEmbeddings(model: string, failure: EmbeddingFailure): void;
  /** Forgets the failures given for `model`. */
  recoverEmbeddings(model: string): void;
  close(): Promise<void>;
}

export interface EmbeddingRequestRecord {
  model: string;
  input: string[];
  /** Date.now() on arrival. */
  at: number;
  /** The HTTP status answered (0 while stalled). */
  status: number;
}

export interface EmbeddingFailure {
  status: number;
  message: string;
  times?: number;
  /** Only requests with an input text holding this string fail. */
  containing?: string;
  /** Sent as `retry-after` (seconds). */
  retryAfterSeconds?: number;
}

export async function startModelProvider(): Promise<ModelProvider> {
  const queue: Array<ScriptedReply & { left: number; source: ScriptedReply }> = [];
  const requests: RecordedRequest[] = [];
  const embeddingRequests: EmbeddingRequestRecord[] = [];
  const embeddingFailures: Array<EmbeddingFailure & { model: string; left: number }> = [];
  const stalledEmbeddingModels = new Set<string>();
  const waiters: Array<{ model?: string; nth: number; resolve: (r: RecordedRequest) => void }> = [];
  let counter = 0;

  const matching = (model?: string) => requests.filter((r) => model === undefined || r.model === model);
  const notifyWaiters = () => {
    for (const w of waiters.slice()) {
      const found = matching(w.model)[w.nth - 1];
      if (found) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(found);
      }
    }
  };
  const take = (body: ChatRequestBody): ScriptedAnswer | undefined => {
    const i = queue.findIndex(
      (r) =>
        (r.model === undefined || r.model === body.model) &&
        (r.asked === undefined || lastMessageText(body).includes(r.asked)),
    );
    if (i < 0) return undefined;
    const reply = queue[i];
    if (--reply.left <= 0) queue.splice(i, 1);
    return reply.respond ? reply.respond(body) : reply;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err) => {
        if (!res.headersSent) sendError(res, 500, `test provider failure: ${String(err)}`, 'server_error');
        else res.destroy();
      });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    res.setHeader('x-request-id', `req_${++counter}`);
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      const names = new Set(['test-model', ...queue.flatMap((r) => (r.model ? [r.model] : []))]);
      return sendJson(res, 200, {
        object: 'list',
        data: [...names].map((id) => ({ id, object: 'model', created: 0, owned_by: 'tarmac-test' })),
      });
    }
    if (req.method === 'POST' && url.pathname === '/v1/embeddings') {
      let body: { model?: unknown; input?: unknown };
      try {
        body = JSON.parse(raw);
      } catch {
        return sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      }
      const input = typeof body.input === 'string' ? [body.input] : body.input;
      if (!Array.isArray(input) || !input.every((t) => typeof t === 'string') || typeof body.model !== 'string') {
        return sendError(res, 400, "'input' must be a string or an array of strings", 'invalid_request_error');
      }
      const record: EmbeddingRequestRecord = { model: body.model, input, at: Date.now(), status: 0 };
      embeddingRequests.push(record);
      if (stalledEmbeddingModels.has(body.model)) {
        await new Promise<void>((resolve) => res.on('close', () => resolve()));
        return;
      }
      const failure = embeddingFailures.find(
        (f) => f.model === body.model && f.left > 0 && (!f.containing || input.some((t) => t.includes(f.containing!))),
      );
      if (failure) {
        failure.left--;
        record.status = failure.status;
        if (failure.retryAfterSeconds !== undefined) res.setHeader('retry-after', String(failure.retryAfterSeconds));
        else if ([408, 409, 429].includes(failure.status) || failure.status >= 500)
          res.setHeader('retry-after-ms', '0');
        const type =
          failure.status === 429 ? 'requests' : failure.status >= 500 ? 'server_error' : 'invalid_request_error';
        return sendError(
          res,
          failure.status,
          failure.message,
          type,
          failure.status === 429 ? 'rate_limit_exceeded' : null,
        );
      }
      record.status = 200;
      return sendJson(res, 200, {
        object: 'list',
        model: body.model,
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: hashedBagOfWords(text) })),
        usage: {
          prompt_tokens: input.join(' ').split(/\s+/).length,
          total_tokens: input.join(' ').split(/\s+/).length,
        },
      });
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions') {
      return sendError(res, 404, `Unknown request URL: ${req.method} ${url.pathname}`, 'invalid_request_error');
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
    }
    let resolveEnded!: (o: Outcome) => void;
    let resolveStalled!: () => void;
    const record: RecordedRequest = {
      method: req.method,
      path: url.pathname,
      headers: req.headers,
      body,
      model: String(body?.model),
      stream: body?.stream === true,
      chunksSent: 0,
      stalled: new Promise<void>((r) => (resolveStalled = r)),
      ended: new Promise<Outcome>((r) => (resolveEnded = r)),
    };
    requests.push(record);
    let closed = false;
    const gone = new Promise<void>((resolve) =>
      res.on('close', () => {
        closed = true;
        record.outcome ??= res.writableFinished ? 'completed' : 'disconnected';
        resolveEnded(record.outcome);
        resolve();
      }),
    );
    notifyWaiters();

    if (typeof body?.model !== 'string' || !Array.isArray(body.messages)) {
      return sendError(
        res,
        400,
        "Missing required parameters: 'model' and 'messages'.",
        'invalid_request_error',
        'missing_required_parameter',
      );
    }
    // Content parts as OpenAI checks them (content-parts.ts): a malformed or misplaced part is its 400.
    const problem = contentProblem(body.messages);
    if (problem) return sendError(res, 400, problem.message, 'invalid_request_error', null, problem.param);
    const answer = take(body);
    if (!answer) {
      return sendError(
        res,
        400,
        `tarmac test provider: no scripted reply for model "${body.model}"`,
        'invalid_request_error',
        'model_not_found',
      );
    }
    if (answer.error) {
      const { status, message, type, code, retryAfterMs } = answer.error;
      const retryable = [408, 409, 429].includes(status) || status >= 500;
      const wait = retryAfterMs === undefined ? (retryable ? 0 : null) : retryAfterMs;
      if (wait !== null) res.setHeader('retry-after-ms', String(wait));
      return sendError(
        res,
        status,
        message,
        type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
        code ?? null,
      );
    }

    if (answer.stallBeforeAnswer) {
      resolveStalled();
      await gone;
      return;
    }

    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const textPieces = answer.chunks ?? (answer.text ? (answer.text.match(/\s*\S+\s*/g) ?? [answer.text]) : []);
    const calls = (answer.toolCalls ?? []).map((c) => ({
      id: c.id ?? `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
      name: c.name,
      arguments: c.arguments,
      pieces: c.argumentChunks ?? c.arguments.match(/[\s\S]{1,8}/g) ?? [],
    }));
    const finishReason = answer.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
    const usage =
      answer.usage === null
        ? null
        : (answer.usage ?? {
            prompt_tokens: body.messages.reduce((n, m) => n + textWords(m.content), 0),
            completion_tokens: textPieces.length + calls.reduce((n, c) => n + 1 + c.pieces.length, 0),
          });
    const withTotal = usage && { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };

    if (!record.stream) {
      const text = answer.text ?? (answer.chunks ? answer.chunks.join('') : null);
      const message: Record<string, unknown> = {
        role: 'assistant',
        content: calls.length && !text ? null : (text ?? ''),
        refusal: null,
      };
      if (calls.length)
        message.tool_calls = calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        }));
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        system_fingerprint: null,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        ...(withTotal ? { usage: withTotal } : {}),
      });
    }

    const includeUsage = body.stream_options?.include_usage === true;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
    const events: unknown[] = [chunk({ role: 'assistant', content: '', refusal: null })];
    for (const piece of textPieces) events.push(chunk({ content: piece }));
    calls.forEach((c, index) => {
      events.push(
        chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }),
      );
      for (const part of c.pieces) events.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    });
    events.push(chunk({}, finishReason));
    if (includeUsage && withTotal) {
      events.push({
        id,
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        system_fingerprint: null,
        choices: [],
        usage: withTotal,
      });
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    for (const event of events) {
      if (answer.stallAfterChunks !== undefined && record.chunksSent >= answer.stallAfterChunks) {
        resolveStalled();
        await gone; // silent until the client goes away
        return;
      }
      if (answer.dropAfterChunks !== undefined && record.chunksSent >= answer.dropAfterChunks) {
        res.destroy();
        return;
      }
      if (answer.streamErrorAfterChunks && record.chunksSent >= answer.streamErrorAfterChunks.chunks) {
        res.write(
          `data: ${JSON.stringify({ error: { message: answer.streamErrorAfterChunks.message, type: 'server_error', param: null, code: null } })}\n\n`,
        );
        res.end();
        return;
      }
      if (answer.chunkDelayMs) await Promise.race([new Promise((r) => setTimeout(r, answer.chunkDelayMs)), gone]);
      if (closed) return;
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      record.chunksSent++;
    }
    if (answer.stallAfterChunks !== undefined && record.chunksSent >= answer.stallAfterChunks) {
      resolveStalled();
      await gone;
      return;
    }
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    embeddingRequests,
    stallEmbeddings: (model) => stalledEmbeddingModels.add(model),
    failEmbeddings: (model, failure) => embeddingFailures.push({ ...failure, model, left: failure.times ?? 1 }),
    recoverEmbeddings: (model) => {
      for (let i = embeddingFailures.length - 1; i >= 0; i--)
        if (embeddingFailures[i].model === model) embeddingFailures.splice(i, 1);
    },
    script: (...replies) => {
      for (const r of replies) queue.push({ ...r, left: r.times ?? 1, source: r });
    },
    withdraw: (...replies) => {
      for (let i = queue.length - 1; i >= 0; i--) if (replies.includes(queue[i].source)) queue.splice(i, 1);
    },
    uniqueModel: (label = 'model') => `${label}-${randomUUID().slice(0, 8)}`,
    requestsFor: (model) => matching(model),
    waitForRequest: (model, nth = 1) =>
      new Promise<RecordedRequest>((resolve) => {
        waiters.push({ model, nth, resolve });
        notifyWaiters();
      }),
    unused: (model) => queue.filter((r) => model === undefined || r.model === model),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Components of the test provider's embeddings. */
export const EMBEDDING_DIMENSIONS = 64;

/** The test provider's embedding of `text`: a hashed bag of words, L2-normalized (all zeros for no words). */
export function hashedBagOfWords(text: string): number[] {
  const v = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619) >>> 0;
    v[h % EMBEDDING_DIMENSIONS] += 1;
  }
  const norm = Math.hypot(...v);
  return norm ? v.map((x) => x / norm) : v;
}

function sendJson(res: http.ServerResponse, status: number, value: unknown) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(
  res: http.ServerResponse,
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
) {
  sendJson(res, status, { error: { message, type, param, code } });
}

// A ModelDriver for one provider speaking the OpenAI chat-completions protocol (OpenAI, Azure OpenAI, Ollama,
// vLLM, llama.cpp, LM Studio, ...), through the official `openai` package.
//
// - Retries: the package's own (connection errors, timeouts, 408, 409, 429, 5xx; honouring retry-after),
//   MODEL_MAX_RETRIES of them. They all happen before any streamed data, so no delta is ever repeated.
// - Timeouts: MODEL_REQUEST_TIMEOUT_SECONDS per attempt until the answer's headers (the package's), and the
//   same as the longest silence inside a stream (ours: the package stops timing once headers arrived).
// - Errors become ModelError: 4xx other than 408/409/429 → `rejected` (the provider's message and status);
//   everything else → `unreachable`. An abort of `request.signal` closes the HTTP request or stream at once
//   and rejects with an Error named `AbortError` (see isAbortError in index.ts).
// - `max_tokens` vs `max_completion_tokens`: OpenAI's newer models refuse `max_tokens`, while Ollama, vLLM and
//   llama.cpp know `max_tokens` (not all know the other), so OpenAI and Azure OpenAI hosts get
//   `max_completion_tokens` and every other provider `max_tokens`. `extraParams` may set either explicitly.
// - Usage a provider does not report (some ignore stream_options.include_usage) counts as zero tokens.
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { ModelUsage } from '../../persistence/entities/run';
import {
  ModelError,
  type ChatTurn,
  type Completion,
  type ContentPart,
  type CompletionDelta,
  type CompletionRequest,
  type EmbeddingRequest,
  type Embeddings,
  type ModelDriver,
  type ToolCall,
} from './types';

/** Sent when a provider needs no key (Ollama, a local vLLM): the package refuses to run without one. */
const NO_KEY = 'no-key';

export class OpenAICompatibleDriver implements ModelDriver {
  private readonly client: OpenAI;
  private readonly timeoutMs: number;
  private readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';

  constructor(
    private readonly provider: string,
    settings: { baseUrl: string; apiKey?: string },
    opts: { timeoutSeconds: number; maxRetries: number },
  ) {
    this.timeoutMs = opts.timeoutSeconds * 1000;
    this.maxTokensField = maxTokensField(settings.baseUrl);
    this.client = new OpenAI({
      baseURL: settings.baseUrl,
      apiKey: settings.apiKey ?? NO_KEY,
      timeout: this.timeoutMs,
      maxRetries: opts.maxRetries,
      // Explicit, so the package reads none of them from the environment (src/config is the only reader).
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      logLevel: 'off',
    });
  }

  async embed(request: EmbeddingRequest): Promise<Embeddings> {
    const done = await embedWith(this.client, this.provider, request);
    return { model: `${this.provider}/${request.model}`, ...done };
  }

  async complete(
    request: CompletionRequest,
    onDelta?: (delta: CompletionDelta) => void | Promise<void>,
  ): Promise<Completion> {
    const outer = request.signal;
    if (outer?.aborted) throw abortError(outer);
    // Our own controller: aborted by the caller's signal, by the stream watchdog, or when onDelta throws.
    const ac = new AbortController();
    const forward = () => ac.abort(outer?.reason);
    outer?.addEventListener('abort', forward, { once: true });
    const aborted = new Promise<never>((_, reject) =>
      ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true }),
    );
    aborted.catch(() => undefined);
    let timedOut = false;
    let watchdog: NodeJS.Timeout | undefined;
    const rearm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        timedOut = true;
        ac.abort();
      }, this.timeoutMs);
    };
    try {
      const body = this.body(request);
      const options = { signal: ac.signal };
      // Racing the abort: the package sleeps between retries without looking at the signal.
      if (!request.stream) {
        const answer = await Promise.race([
          this.client.chat.completions.create(
            { ...body, stream: false } as ChatCompletionCreateParamsNonStreaming,
            options,
          ),
          aborted,
        ]);
        const choice = answer.choices?.[0];
        return {
          model: `${this.provider}/${request.model}`,
          text: choice?.message?.content ?? '',
          toolCalls: (choice?.message?.tool_calls ?? []).flatMap((c, i) =>
            c.type === 'function'
              ? [{ id: c.id || `call_${i}`, name: c.function.name, arguments: c.function.arguments ?? '' }]
              : [],
          ),
          usage: usageOf(answer.usage),
          finishReason: choice?.finish_reason ?? 'stop',
        };
      }
      const stream = await Promise.race([
        this.client.chat.completions.create(
          { stream_options: { include_usage: true }, ...body, stream: true } as ChatCompletionCreateParamsStreaming,
          options,
        ),
        aborted,
      ]);
      rearm();
      const acc = new StreamAccumulator();
      // The package's stream ends quietly (no error) when its request is aborted: checked after the loop.
      for await (const chunk of stream) {
        clearTimeout(watchdog); // the caller's time in onDelta is not the provider's silence
        for (const delta of acc.add(chunk)) {
          if (ac.signal.aborted) break;
          if (onDelta) await callerCode(() => onDelta(delta));
        }
        if (ac.signal.aborted) break;
        rearm();
      }
      if (outer?.aborted) throw abortError(outer);
      if (timedOut) throw silentProvider(this.provider, this.timeoutMs);
      if (acc.finishReason === undefined) {
        throw new ModelError(
          'unreachable',
          `Model provider "${this.provider}" ended its stream before the answer was complete`,
        );
      }
      return { model: `${this.provider}/${request.model}`, ...acc.result() };
    } catch (err) {
      if (err instanceof CallerError) {
        ac.abort();
        throw err.cause;
      }
      if (outer?.aborted) throw abortError(outer);
      if (timedOut) throw silentProvider(this.provider, this.timeoutMs);
      throw toModelError(this.provider, err);
    } finally {
      clearTimeout(watchdog);
      outer?.removeEventListener('abort', forward);
    }
  }

  private body(request: CompletionRequest): Record<string, unknown> {
    const body: Record<string, unknown> = { model: request.model, messages: request.turns.map(toMessage) };
    if (request.tools?.length) {
      body.tools = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      if (request.toolChoice) body.tool_choice = request.toolChoice;
    }
    if (request.outputSchema) {
      const { name, schema } = request.outputSchema;
      body.response_format = { type: 'json_schema', json_schema: { name, schema, strict: isStrictSchema(schema) } };
    }
    if (request.maxTokens !== undefined) body[this.maxTokensField] = request.maxTokens;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    return { ...body, ...request.extraParams };
  }
}

/**
 * `/v1/embeddings` (OpenAI wire format, floats). Same retries, timeout and error mapping as `complete`; an
 * answer without one vector per input, or with vectors of different lengths, is `unreachable` (a broken provider).
 */
export async function embedWith(
  client: OpenAI,
  provider: string,
  request: EmbeddingRequest & { model: string },
): Promise<Omit<Embeddings, 'model'>> {
  if (request.signal?.aborted) throw abortError(request.signal);
  let answer: OpenAI.Embeddings.CreateEmbeddingResponse;
  try {
    answer = await client.embeddings.create(
      { model: request.model, input: request.input, encoding_format: 'float' },
      { signal: request.signal },
    );
  } catch (err) {
    if (request.signal?.aborted) throw abortError(request.signal);
    throw toModelError(provider, err);
  }
  const vectors: number[][] = new Array(request.input.length);
  for (const item of answer.data ?? []) vectors[item.index] = item.embedding;
  const dims = new Set(vectors.map((v) => v?.length));
  if (vectors.some((v) => !Array.isArray(v)) || dims.size !== 1 || dims.has(0)) {
    throw new ModelError('unreachable', `Model provider "${provider}" answered embeddings that do not match the input`);
  }
  return { vectors, inputTokens: answer.usage?.prompt_tokens ?? 0 };
}

/** A turn in OpenAI's wire format. */
export function toMessage(turn: ChatTurn): ChatCompletionMessageParam {
  switch (turn.role) {
    case 'system':
      return { role: 'system', content: turn.content };
    case 'user':
      return { role: 'user', content: typeof turn.content === 'string' ? turn.content : turn.content.map(toPart) };
    case 'assistant':
      return turn.toolCalls?.length
        ? {
            role: 'assistant',
            content: turn.content,
            tool_calls: turn.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: turn.content ?? '' };
    case 'tool':
      return { role: 'tool', tool_call_id: turn.toolCallId, content: turn.content };
  }
}

/** A content part in OpenAI's wire format (`video_url` is vLLM's, which OpenAI's types do not name). */
function toPart(part: ContentPart): ChatCompletionContentPart {
  switch (part.kind) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) } };
    case 'audio':
      return { type: 'input_audio', input_audio: { data: part.data, format: part.format as 'wav' | 'mp3' } };
    case 'video':
      return { type: 'video_url', video_url: { url: part.url } } as unknown as ChatCompletionContentPart;
  }
}

/** Builds the deltas and the final answer from chat.completion.chunk objects (choice 0). */
class StreamAccumulator {
  private text = '';
  private readonly calls: Array<{ id?: string; name?: string; arguments: string }> = [];
  private usage: ModelUsage = { input_tokens: 0, output_tokens: 0 };
  finishReason: string | undefined;

  add(chunk: ChatCompletionChunk): CompletionDelta[] {
    if (chunk.usage) this.usage = usageOf(chunk.usage);
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return [];
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const deltas: CompletionDelta[] = [];
    const content = choice.delta?.content;
    if (content) {
      this.text += content;
      deltas.push({ kind: 'text', text: content });
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const index = piece.index ?? this.calls.length;
      const call = (this.calls[index] ??= { arguments: '' });
      const argumentsPart = piece.function?.arguments ?? '';
      call.id ??= piece.id || undefined;
      call.name ??= piece.function?.name || undefined;
      call.arguments += argumentsPart;
      const delta: CompletionDelta = { kind: 'tool-call', index, argumentsPart };
      if (piece.id) delta.id = piece.id;
      if (piece.function?.name) delta.name = piece.function.name;
      deltas.push(delta);
    }
    return deltas;
  }

  result(): Omit<Completion, 'model'> {
    const toolCalls: ToolCall[] = this.calls.flatMap((c, i) =>
      c ? [{ id: c.id ?? `call_${i}`, name: c.name ?? '', arguments: c.arguments }] : [],
    );
    return { text: this.text, toolCalls, usage: this.usage, finishReason: this.finishReason ?? 'stop' };
  }
}

function usageOf(usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): ModelUsage {
  return { input_tokens: usage?.prompt_tokens ?? 0, output_tokens: usage?.completion_tokens ?? 0 };
}

/** An error thrown by the caller's onDelta: passed through untouched, never mapped to a ModelError. */
class CallerError extends Error {
  constructor(override readonly cause: unknown) {
    super('onDelta failed');
  }
}

async function callerCode(fn: () => void | Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    throw new CallerError(err);
  }
}

function abortError(signal: AbortSignal): Error {
  const err = new Error('The model request was aborted', { cause: signal.reason });
  err.name = 'AbortError';
  return err;
}

function silentProvider(provider: string, timeoutMs: number): ModelError {
  return new ModelError(
    'unreachable',
    `Model provider "${provider}" sent nothing for ${timeoutMs / 1000} s (MODEL_REQUEST_TIMEOUT_SECONDS)`,
  );
}

function toModelError(provider: string, err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError(
      'unreachable',
      `Model provider "${provider}" did not answer in time (MODEL_REQUEST_TIMEOUT_SECONDS)`,
    );
  }
  if (err instanceof OpenAI.APIConnectionError) {
    const cause =
      err.cause instanceof Error
        ? `: ${(err.cause as Error & { cause?: Error }).cause?.message ?? err.cause.message}`
        : '';
    return new ModelError(
      'unreachable',
      `Model provider "${provider}" could not be reached (${err.message.replace(/\.$/, '')}${cause})`,
    );
  }
  if (err instanceof OpenAI.APIError) {
    const message =
      typeof err.error === 'object' && err.error && typeof (err.error as { message?: unknown }).message === 'string'
        ? (err.error as { message: string }).message
        : err.message;
    const status = err.status;
    if (status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status)) {
      return new ModelError(
        'rejected',
        `Model provider "${provider}" rejected the request (${status}): ${message}`,
        status,
      );
    }
    // 408/409/429/5xx after retries, or an error event inside a stream (no status).
    return new ModelError(
      'unreachable',
      `Model provider "${provider}" failed${status ? ` (${status})` : ''}: ${message}`,
      status,
    );
  }
  // A dropped connection or malformed data in the middle of a stream.
  return new ModelError(
    'unreachable',
    `Model provider "${provider}" broke off its answer: ${err instanceof Error ? err.message : String(err)}`,
  );
}

/** OpenAI and Azure OpenAI want `max_completion_tokens` (newer models refuse `max_tokens`); others `max_tokens`. */
export function maxTokensField(baseUrl: string): 'max_tokens' | 'max_completion_tokens' {
  const host = new URL(baseUrl).hostname;
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'max_completion_tokens' : 'max_tokens';
}

/**
 * Whether OpenAI's strict structured outputs accept `schema`: every object closes its properties
 * (`additionalProperties: false`) and requires all of them. Other schemas are sent with `strict: false`
 * (the provider then follows the schema on a best-effort basis; the caller validates the answer).
 */
export function isStrictSchema(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(isStrictSchema);
  if (typeof schema !== 'object' || schema === null) return true;
  const s = schema as Record<string, unknown>;
  const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || 'properties' in s;
  if (isObject) {
    const props = Object.keys((s.properties as Record<string, unknown> | undefined) ?? {});
    const required = Array.isArray(s.required) ? s.required : [];
    if (s.additionalProperties !== false || !props.every((p) => required.includes(p))) return false;
  }
  for (const key of ['properties', '$defs', 'definitions']) {
    const group = s[key];
    if (group && typeof group === 'object' && !Object.values(group).every(isStrictSchema)) return false;
  }
  return ['items', 'anyOf', 'allOf', 'oneOf'].every((key) => s[key] === undefined || isStrictSchema(s[key]));
}

// The provider-neutral model interface. Assistant runs and chat messages speak only this; a driver maps
// it onto one provider's wire protocol (openai-compatible.ts: OpenAI, Ollama, vLLM, llama.cpp, ...).
import type { ModelUsage } from '../../persistence/entities/run';

export interface ToolCall {
  /** The provider's id for this call; a tool result names it. */
  id: string;
  /** A ToolDefinition name. */
  name: string;
  /** The arguments as the model wrote them: JSON text (may be invalid JSON; the caller decides). */
  arguments: string;
}

/** A piece of a user turn that is not only text: the parts of OpenAI's content array. */
export type ContentPart =
  | { kind: 'text'; text: string }
  /** An image: an http(s) URL the provider fetches, or a `data:image/<format>;base64,...` URL. */
  | { kind: 'image'; url: string; detail?: 'auto' | 'low' | 'high' }
  /** Audio, base64 (OpenAI takes wav and mp3). */
  | { kind: 'audio'; data: string; format: string }
  /** A video by URL (vLLM and other OpenAI-compatible servers; OpenAI itself takes none). */
  | { kind: 'video'; url: string };

/** One turn of a conversation. */
export type ChatTurn =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A function the model may call. `parameters` is a JSON Schema of an object. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface CompletionRequest {
  /** `provider/model`, or a model of the default provider; the configured default model when absent. */
  model?: string;
  turns: ChatTurn[];
  tools?: ToolDefinition[];
  /** `required`: the model must call one of `tools` (griptape's `tool` structured output strategy); default `auto`. */
  toolChoice?: 'auto' | 'required';
  /** Structured output: the answer must be JSON valid against `schema` (a JSON Schema object). */
  outputSchema?: { name: string; schema: Record<string, unknown> };
  maxTokens?: number;
  temperature?: number;
  /** Passed through to the provider's request body as is (e.g. top_p, seed). */
  extraParams?: Record<string, unknown>;
  /** Stream the answer: `onDelta` gets each piece as it arrives. */
  stream: boolean;
  /** Aborts the request or stream at once (cancellation): no further tokens are read or paid for. */
  signal?: AbortSignal;
}

/** A streamed piece of the answer, in order. */
export type CompletionDelta =
  | { kind: 'text'; text: string }
  /** A piece of tool call `index` (position in this answer): id and name come first, arguments in parts. */
  | { kind: 'tool-call'; index: number; id?: string; name?: string; argumentsPart: string };

export interface Completion {
  /** The model that answered, as `provider/model`. */
  model: string;
  text: string;
  toolCalls: ToolCall[];
  usage: ModelUsage;
  /** The provider's finish reason (stop, length, tool_calls, ...). */
  finishReason: string;
}

/** Embeddings of texts (knowledge bases): one vector per input, in order. */
export interface EmbeddingRequest {
  /** `provider/model`. */
  model: string;
  input: string[];
  signal?: AbortSignal;
}

export interface Embeddings {
  /** `provider/model`. */
  model: string;
  vectors: number[][];
  /** Tokens the provider counted (0 when it reports none). */
  inputTokens: number;
}

export interface ModelDriver {
  complete(request: CompletionRequest, onDelta?: (delta: CompletionDelta) => void | Promise<void>): Promise<Completion>;
  embed(request: EmbeddingRequest): Promise<Embeddings>;
}

/**
 * Why a model call failed:
 * - `not-configured`: no provider serves this model (the message says how to configure one);
 * - `rejected`: the provider answered with a client error (bad model, bad key, bad request): retrying won't help;
 * - `unreachable`: connection failure, timeout, 429 or 5xx after the driver's own safe retries.
 * Runs end FAILED for the first two and ERROR for the last.
 */
export type ModelErrorKind = 'not-configured' | 'rejected' | 'unreachable';

export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    /** The provider's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

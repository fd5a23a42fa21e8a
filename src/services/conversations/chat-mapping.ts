// griptape's prompt stack ⇄ the model interface, for POST /api/chat/messages[/stream]. The request carries
// griptape `Message` dicts (PromptStack.to_dict()["messages"]), tool definitions and a driver
// configuration, as griptape's GriptapeCloudPromptDriver sends them; the answer is a griptape `Message`
// dict (or, streamed, `DeltaMessage` dicts). Tools map to model functions the way griptape's own OpenAI
// driver does it, so tool calls round-trip into griptape's ActionsSubtask: function `<tool>_<activity>`, the
// activity's JSON schema as parameters, the model's arguments as the ToolAction's `input` (griptape wraps
// them in `{"values": ...}` itself when it calls the activity), the call id as its `tag`; an action result
// goes back as a `tool` turn naming that tag. Pure functions: the api validates with them, the activity
// builds the model request with them.
import { createHash } from 'node:crypto';
import type {
  ChatTurn,
  Completion,
  ContentPart,
  CompletionDelta,
  CompletionRequest,
  ToolCall,
  ToolDefinition,
} from '../../drivers/model/types';
import type { ModelUsage } from '../../persistence/entities/run';
import { griptapeId } from '../../ids';
import {
  ChatRequestError,
  type ChatRequest,
  type MessageDict,
  type ToolActionDict,
  type ToolDict,
} from './chat-request';
import type { ArtifactDict } from './chat-request';
import { MEDIA_CONTENT, mediaPart, type MappedPart } from './chat-media';

export * from './chat-request';

export const CHAT_LIMITS = {
  /** Messages per request. */
  messages: 1000,
  /** Content items per message. */
  contents: 100,
  /** Tools per request, and activities per tool (how many functions a model takes in all is the provider's limit: OpenAI's is 128). */
  functions: 128,
};

/** Event type of a streamed piece of an exchange; its payload is the DeltaMessage dict the stream sends as is. */
export const CHAT_DELTA_EVENT = 'ChatMessageDelta';

/** Parameters the service sets itself; `extra_params` may not override them. */
export const RESERVED_EXTRA_PARAMS = ['model', 'messages', 'stream', 'n'];

/** An answer of the model that cannot become a griptape Message (a tool call whose arguments are no JSON object). */
export class ModelAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelAnswerError';
  }
}

// ---- Tools ----

/** Tool and activity names: the characters of function names providers accept. */
export const TOOL_NAME_PATTERN = '^[A-Za-z0-9_-]+$';
/** The longest function name providers accept. */
const MAX_FUNCTION_NAME = 64;

/**
 * The function name of a tool activity: griptape's `<tool>_<activity>`, or when that is too long for providers
 * or already taken, its first 55 characters and a hash (calls map back through ToolNames either way).
 */
function functionName(tool: string, activity: string, taken: ToolNames): string {
  const native = nativeToolName(tool, activity);
  if (native.length <= MAX_FUNCTION_NAME && !taken.has(native)) return native;
  for (let n = 0; ; n++) {
    const hash = createHash('sha256').update(`${tool}\n${activity}\n${n}`).digest('hex').slice(0, 8);
    const name = `${native.slice(0, MAX_FUNCTION_NAME - 9)}_${hash}`;
    if (!taken.has(name)) return name;
  }
}

/** The function name of a griptape tool activity: `ToolAction.to_native_tool_name()`. */
export const nativeToolName = (name: string, path: string | null | undefined) =>
  path != null ? `${name}_${path}` : name;

/** Function name → griptape tool name and activity (path). */
export type ToolNames = Map<string, { name: string; path: string | null }>;

/**
 * The tool name and path of a function name: as offered, else `ToolAction.from_native_tool_name` (split at the
 * first `_`), for a function the model made up.
 */
export function toolOfFunction(names: ToolNames, fn: string): { name: string; path: string | null } {
  const offered = names.get(fn);
  if (offered) return offered;
  const cut = fn.indexOf('_');
  return cut < 0 ? { name: fn, path: null } : { name: fn.slice(0, cut), path: fn.slice(cut + 1) };
}

/** The functions offered to the model, one per tool activity, and the names to map calls back with. */
export function toolDefinitions(tools: ToolDict[]): { definitions: ToolDefinition[]; names: ToolNames } {
  const definitions: ToolDefinition[] = [];
  const names: ToolNames = new Map();
  for (const tool of tools) {
    for (const activity of tool.activities) {
      const fn = functionName(tool.name, activity.name, names);
      names.set(fn, { name: tool.name, path: activity.name });
      const schema = activity.json_schema;
      definitions.push({
        name: fn,
        description: activity.description ?? '',
        parameters:
          schema && typeof schema === 'object' && !Array.isArray(schema)
            ? (schema as Record<string, unknown>)
            : { type: 'object', properties: {} },
      });
    }
  }
  return { definitions, names };
}

// ---- Messages ----

/** Python's json.dumps with its default separators, as griptape renders JSON artifacts. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `artifact.to_text()` of griptape, from the artifact's dict. */
export function artifactText(artifact: ArtifactDict | undefined): string {
  if (!artifact || typeof artifact !== 'object') return '';
  const { type, value } = artifact;
  switch (type) {
    case 'ListArtifact': {
      const separator = typeof artifact.item_separator === 'string' ? artifact.item_separator : '\n\n';
      return (Array.isArray(value) ? value : []).map((item) => artifactText(item as ArtifactDict)).join(separator);
    }
    case 'BlobArtifact':
      return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : '';
    case 'ImageArtifact':
    case 'AudioArtifact': {
      const size = typeof value === 'string' ? Buffer.from(value, 'base64').length : 0;
      return `${type === 'ImageArtifact' ? 'Image' : 'Audio'}, format: ${String(artifact.format ?? '')}, size: ${size} bytes`;
    }
    case 'BooleanArtifact':
      return value ? 'true' : 'false';
    case 'ActionArtifact':
      return pythonJson(value);
    default:
      return typeof value === 'string' ? value : pythonJson(value ?? null);
  }
}

function toolAction(value: unknown, path: string): ToolActionDict {
  const action = value as ToolActionDict | null;
  if (
    !action ||
    typeof action !== 'object' ||
    typeof action.tag !== 'string' ||
    action.tag === '' ||
    typeof action.name !== 'string'
  ) {
    throw new ChatRequestError('A ToolAction needs a `tag` (the call id) and a `name`', path);
  }
  return action;
}

/** A media part of the request, where it is: what the api checks against the model and the address policy. */
export type MediaUse = MappedPart & { path: string; type: string };

/**
 * The conversation as model turns: system and user text; an assistant message's text and tool calls
 * (ActionCallMessageContent) as one turn; a user message's action results (ActionResultMessageContent) as
 * `tool` turns, followed by its text, if any, as a user turn (as griptape's OpenAI driver sends them). A user
 * message with images, audio or video is a turn of content parts, in order (chat-media.ts); `media` collects them.
 */
export function toTurns(messages: MessageDict[], media: MediaUse[] = []): ChatTurn[] {
  const turns: ChatTurn[] = [];
  messages.forEach((message, m) => {
    let text = '';
    let hasText = false;
    const parts: ContentPart[] = [];
    const toolCalls: ToolCall[] = [];
    const results: ChatTurn[] = [];
    message.content.forEach((content, c) => {
      const path = `/body/messages/${m}/content/${c}`;
      if (MEDIA_CONTENT.includes(content.type)) {
        const mapped = mediaPart(content, message.role, path);
        if (mapped.part.kind === 'text') text += mapped.part.text;
        if (mapped.kind) media.push({ ...mapped, path, type: content.type });
        parts.push(mapped.part);
        hasText ||= mapped.part.kind === 'text';
        return;
      }
      switch (content.type) {
        case 'TextMessageContent':
          text += artifactText(content.artifact);
          parts.push({ kind: 'text', text: artifactText(content.artifact) });
          hasText = true;
          return;
        case 'ActionCallMessageContent': {
          if (message.role !== 'assistant')
            throw new ChatRequestError(
              'Tool calls (ActionCallMessageContent) belong to assistant messages',
              `${path}/type`,
            );
          const action = toolAction(content.artifact?.value, `${path}/artifact/value`);
          toolCalls.push({
            id: action.tag,
            name: nativeToolName(action.name, action.path),
            arguments: JSON.stringify(action.input ?? {}),
          });
          return;
        }
        case 'ActionResultMessageContent': {
          if (message.role !== 'user')
            throw new ChatRequestError(
              'Tool results (ActionResultMessageContent) belong to user messages',
              `${path}/type`,
            );
          const action = toolAction(content.action, `${path}/action`);
          results.push({ role: 'tool', toolCallId: action.tag, content: artifactText(content.artifact) });
          return;
        }
        default:
          throw new ChatRequestError(`Unknown message content type "${content.type}"`, `${path}/type`);
      }
    });
    switch (message.role) {
      case 'system':
        turns.push({ role: 'system', content: text });
        break;
      case 'assistant':
        turns.push(
          toolCalls.length
            ? { role: 'assistant', content: text || null, toolCalls }
            : { role: 'assistant', content: text },
        );
        break;
      default:
        turns.push(...results);
        if (parts.some((p) => p.kind !== 'text')) turns.push({ role: 'user', content: parts });
        else if (hasText || !results.length) turns.push({ role: 'user', content: text });
    }
  });
  return turns;
}

// ---- NUL characters (PostgreSQL stores no NUL in text or jsonb; requests with one are refused by the api) ----

/** `value` with every NUL character in its strings replaced by U+FFFD: what a model says must fit in PostgreSQL. */
export function withoutNul<T>(value: T): T {
  if (typeof value === 'string') return value.replace(/\u0000/g, '\uFFFD') as T;
  if (Array.isArray(value)) return value.map(withoutNul) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), withoutNul(v)])) as T;
  }
  return value;
}

// ---- The request ----

/** The model request of a chat request (throws ChatRequestError for what it cannot carry). */
export function toCompletionRequest(
  body: ChatRequest,
  stream: boolean,
  media?: MediaUse[],
): Omit<CompletionRequest, 'signal'> & { toolNames: ToolNames } {
  const config = body.driver_configuration ?? {};
  const extra = config.extra_params ?? {};
  for (const key of RESERVED_EXTRA_PARAMS) {
    if (key in extra)
      throw new ChatRequestError(`extra_params may not set "${key}"`, `/body/driver_configuration/extra_params/${key}`);
  }
  const turns = toTurns(body.messages, media);
  const useNativeTools = config.use_native_tools ?? true;
  const strategy = config.structured_output_strategy ?? 'native';
  const schema = body.output_schema ?? undefined;
  const tools = [...body.tools];
  if (schema && strategy === 'tool' && useNativeTools && !tools.some((t) => t.name === 'StructuredOutputTool')) {
    // griptape adds this tool itself before it sends the request; other clients get the same.
    tools.push({
      name: 'StructuredOutputTool',
      activities: [
        {
          name: 'provide_output',
          description: 'Used to provide the final response which ends this conversation.',
          json_schema: schema,
        },
      ],
    });
  }
  const { definitions, names } = toolDefinitions(tools);
  const offered = useNativeTools && definitions.length ? definitions : undefined;
  return {
    ...(config.model ? { model: config.model } : {}),
    turns,
    ...(offered ? { tools: offered } : {}),
    // `tool`: the answer is a call of StructuredOutputTool, so some call is required (griptape's OpenAI driver does the same).
    ...(offered && schema && strategy === 'tool' ? { toolChoice: 'required' as const } : {}),
    // `rule`: griptape has put the schema into the system message itself; nothing to add.
    ...(schema && strategy === 'native' ? { outputSchema: { name: 'Output', schema } } : {}),
    ...(config.max_tokens != null ? { maxTokens: config.max_tokens } : {}),
    ...(config.temperature != null ? { temperature: config.temperature } : {}),
    ...(Object.keys(extra).length ? { extraParams: extra } : {}),
    stream,
    toolNames: names,
  };
}

// ---- The answer ----

const usageDict = (usage: ModelUsage | null) => ({
  type: 'Usage',
  input_tokens: usage?.input_tokens ?? null,
  output_tokens: usage?.output_tokens ?? null,
});

/** A TextArtifact dict as griptape writes it. */
export function textArtifactDict(value: string, id = griptapeId()) {
  return { type: 'TextArtifact', id, reference: null, meta: {}, name: id, value };
}

function callInput(call: ToolCall): Record<string, unknown> {
  let input: unknown;
  try {
    input = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    input = undefined;
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new ModelAnswerError(
      `The model called ${call.name} with arguments that are not a JSON object: ${call.arguments.slice(0, 200)}`,
    );
  }
  return input as Record<string, unknown>;
}

/** The answer as a griptape `Message` dict: its text (if any, or if there is nothing else), then its tool calls. */
export function answerMessage(
  completion: Pick<Completion, 'text' | 'toolCalls' | 'usage'>,
  names: ToolNames,
  newId = griptapeId,
) {
  const content: unknown[] = [];
  if (completion.text || !completion.toolCalls.length)
    content.push({ type: 'TextMessageContent', artifact: textArtifactDict(completion.text, newId()) });
  for (const call of completion.toolCalls) {
    const id = newId();
    const { name, path } = toolOfFunction(names, call.name);
    content.push({
      type: 'ActionCallMessageContent',
      artifact: {
        type: 'ActionArtifact',
        id,
        reference: null,
        meta: {},
        name: id,
        value: { type: 'ToolAction', tag: call.id, name, path, input: callInput(call) },
      },
    });
  }
  return { type: 'Message', role: 'assistant', usage: usageDict(completion.usage), content };
}

/** A streamed piece as a griptape `DeltaMessage` dict (text at index 0, tool call `i` at index `i`, as griptape's OpenAI driver). */
export function deltaMessage(delta: CompletionDelta, names: ToolNames) {
  let content: Record<string, unknown>;
  if (delta.kind === 'text') {
    content = { type: 'TextDeltaMessageContent', index: 0, text: delta.text };
  } else {
    const tool = delta.name ? toolOfFunction(names, delta.name) : undefined;
    content = {
      type: 'ActionCallDeltaMessageContent',
      index: delta.index,
      tag: delta.id ?? null,
      name: tool?.name ?? null,
      path: tool?.path ?? null,
      partial_input: delta.argumentsPart,
    };
  }
  return { type: 'DeltaMessage', role: null, usage: usageDict(null), content };
}

/** The last streamed piece: the usage of the answer. */
export const usageDeltaMessage = (usage: ModelUsage) => ({
  type: 'DeltaMessage',
  role: null,
  usage: usageDict(usage),
  content: null,
});

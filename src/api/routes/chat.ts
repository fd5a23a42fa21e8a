// Chat messages: one model exchange per request, in griptape's own shapes (what griptape's
// GriptapeCloudPromptDriver sends and reads). The model is called by the exchange's workflow in the worker
// (chat-run-<uuid>); this route waits for its answer or streams its pieces.
import { CHAT_LIMITS, RESERVED_EXTRA_PARAMS, TOOL_NAME_PATTERN } from '../../services/conversations/chat-mapping';
import {
  abandonChatMessage,
  ChatRunInput,
  chatAnswer,
  chatFrame,
  createChatMessage,
  waitForChatAnswer,
} from '../../services/conversations/chat-messages';
import { serviceUnavailable } from '../../errors';
import { route } from '../http/route';
import { eventStreamResponse, streamRunEvents } from '../sse/event-stream';
import { admitStream } from '../sse/stream-quota';
import { defineSchema, JsonSchema, NUL_TEXT } from '../schemas/registry';

const TAG = 'Chat';

const ArtifactSchema = defineSchema('ChatArtifact', {
  type: 'object',
  required: ['type'],
  description:
    'A griptape artifact dict (`BaseArtifact.to_dict()`): `TextArtifact`, `ActionArtifact` (its `value` a ToolAction), ' +
    '`JsonArtifact`, `ErrorArtifact`, `ListArtifact`, ... Answers carry `type`, `id`, `name`, `value`, `meta`, `reference`.',
  properties: {
    type: { type: 'string', maxLength: 100 },
    id: { type: 'string' },
    name: { type: 'string' },
    value: {},
    meta: {},
    reference: {},
  },
});

const UsageSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    input_tokens: { type: ['number', 'null'] },
    output_tokens: { type: ['number', 'null'] },
  },
} as const;

const ToolActionSchema = {
  type: 'object',
  required: ['tag', 'name'],
  description: 'A griptape ToolAction dict: `tag` is the call id.',
  properties: {
    tag: { type: 'string', minLength: 1 },
    name: { type: 'string' },
    path: { type: ['string', 'null'] },
    input: {},
  },
} as const;

// Message contents, by `type`: text anywhere, tool calls in assistant messages, tool results, images, audio and
// video in user messages (an assistant's audio answer goes back as its transcript). What the artifacts must hold
// is checked by the mapping (chat-media.ts), whose errors point at the member at fault.
const TextContent = {
  type: 'object',
  required: ['type', 'artifact'],
  properties: { type: { const: 'TextMessageContent' }, artifact: ArtifactSchema },
} as const;
const ActionCallContent = {
  type: 'object',
  required: ['type', 'artifact'],
  properties: {
    type: { const: 'ActionCallMessageContent' },
    artifact: {
      type: 'object',
      required: ['value'],
      properties: { value: ToolActionSchema },
      description: 'An ActionArtifact dict.',
    },
  },
} as const;
const ActionResultContent = {
  type: 'object',
  required: ['type', 'action'],
  properties: {
    type: { const: 'ActionResultMessageContent' },
    artifact: ArtifactSchema,
    action: { ...ToolActionSchema, description: 'The ToolAction this result answers.' },
  },
} as const;
/** Image, audio, video and generic contents: their artifact is checked by the mapping (src/services/conversations/chat-media.ts). */
const mediaContent = (type: string, description: string) =>
  ({
    type: 'object',
    required: ['type', 'artifact'],
    description,
    properties: { type: { const: type }, artifact: ArtifactSchema },
  }) as const;
const ImageContent = mediaContent(
  'ImageMessageContent',
  'An `ImageArtifact` (`value` base64, `format` e.g. png) or an `ImageUrlArtifact` (`value` an http(s) or data: URL, passed to the provider, never fetched by the platform): an `image_url` part.',
);
const AudioContent = mediaContent(
  'AudioMessageContent',
  'An `AudioArtifact` (`value` base64, `format` wav or mp3 for OpenAI): an `input_audio` part. In assistant messages, its `meta.transcript` as text.',
);
const VideoContent = mediaContent(
  'VideoMessageContent',
  'A `VideoUrlArtifact` (`value` an http(s) URL): a `video_url` part (vLLM and the like; OpenAI takes no video).',
);
const GenericContent = mediaContent(
  'GenericMessageContent',
  'A `GenericArtifact` whose `value` is text or an OpenAI content part (`text`, `image_url`, `input_audio`, `video_url`), sent as is.',
);

/** The message of one role: its contents of these kinds. Discriminators make errors name the part at fault. */
const messageOf = (role: string, ...kinds: JsonSchema[]) => ({
  required: ['role'],
  // `type: object` too: ajv's discriminator lets anything else (a null item) through.
  properties: {
    role: { const: role },
    content: { items: { type: 'object', required: ['type'], oneOf: kinds, discriminator: { propertyName: 'type' } } },
  },
});

const MessageSchema = defineSchema('ChatMessage', {
  type: 'object',
  required: ['role', 'content', 'usage'],
  description: 'A griptape `Message` dict.',
  oneOf: [
    messageOf('system', TextContent),
    messageOf('user', TextContent, ActionResultContent, ImageContent, AudioContent, VideoContent, GenericContent),
    messageOf('assistant', TextContent, ActionCallContent, AudioContent),
  ],
  discriminator: { propertyName: 'role' },
  properties: {
    type: { type: 'string' },
    role: { type: 'string', enum: ['system', 'user', 'assistant'] },
    content: {
      type: 'array',
      maxItems: CHAT_LIMITS.contents,
      description:
        '`TextMessageContent`; `ActionCallMessageContent` (assistant messages); `ActionResultMessageContent`, ' +
        '`ImageMessageContent`, `AudioMessageContent`, `VideoMessageContent` and `GenericMessageContent` (user ' +
        'messages; the model must take the content: GET /api/models `capabilities`, MODEL_IMAGE_INPUT, ...).',
    },
    usage: UsageSchema,
  },
});

const AnswerSchema = defineSchema('ChatMessageAnswer', {
  type: 'object',
  required: ['type', 'role', 'content', 'usage'],
  description:
    'The answer as a griptape `Message` dict (`Message.from_dict`): role `assistant`; a TextMessageContent with the ' +
    'text, then one ActionCallMessageContent per tool call (an ActionArtifact whose `value` is a ToolAction `{tag, name, path, input}`).',
  properties: {
    type: { type: 'string', enum: ['Message'] },
    role: { type: 'string', enum: ['assistant'] },
    content: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'artifact'],
        properties: { type: { type: 'string' }, artifact: ArtifactSchema },
      },
    },
    usage: { ...UsageSchema, required: ['type', 'input_tokens', 'output_tokens'] },
  },
});

const RequestSchema = defineSchema('CreateChatMessageRequest', {
  type: 'object',
  required: ['messages', 'tools', 'driver_configuration'],
  properties: {
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: CHAT_LIMITS.messages,
      items: MessageSchema,
      description: 'The conversation: `PromptStack.to_dict()["messages"]`.',
    },
    tools: {
      type: 'array',
      maxItems: CHAT_LIMITS.functions,
      description:
        'Offered to the model as functions `<name>_<activity name>` (shortened with a hash past 64 characters, or when two are ' +
        "the same; calls come back with the tool's name and activity). How many functions a model takes is its provider's limit (OpenAI: 128).",
      items: {
        type: 'object',
        required: ['name', 'activities'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 64, pattern: TOOL_NAME_PATTERN },
          activities: {
            type: 'array',
            maxItems: CHAT_LIMITS.functions,
            items: {
              type: 'object',
              required: ['name', 'description', 'json_schema'],
              properties: {
                name: { type: 'string', minLength: 1, maxLength: 64, pattern: TOOL_NAME_PATTERN },
                description: { type: 'string' },
                json_schema: {
                  type: 'object',
                  description: "JSON Schema of the activity's input: the function's parameters.",
                },
              },
            },
          },
        },
      },
    },
    output_schema: {
      type: ['object', 'null'],
      description:
        'JSON Schema of a structured answer (see `structured_output_strategy`). Optional: griptape sends it only when it wants structured output.',
    },
    driver_configuration: {
      type: 'object',
      properties: {
        model: {
          type: ['string', 'null'],
          maxLength: 200,
          description: '`provider/model`; the configured DEFAULT_MODEL when absent.',
        },
        max_tokens: { type: ['integer', 'null'], minimum: 1 },
        temperature: { type: ['number', 'null'], minimum: 0 },
        use_native_tools: {
          type: ['boolean', 'null'],
          description: 'false: the tools are not sent to the model (griptape prompts for them itself). Default true.',
        },
        structured_output_strategy: {
          enum: ['native', 'tool', 'rule', null],
          description:
            '`native` (default): the provider is held to `output_schema` (response_format json_schema). `tool`: a tool ' +
            'call is required (griptape offers its StructuredOutputTool; added when missing). `rule`: nothing is added (griptape ' +
            'has put the schema into the system message).',
        },
        extra_params: {
          type: ['object', 'null'],
          propertyNames: { not: { anyOf: [NUL_TEXT, { enum: RESERVED_EXTRA_PARAMS }] } },
          description:
            'Copied into the provider request (e.g. `top_p`, `seed`, `response_format`); may not set `model`, `messages`, `stream` or `n`.',
        },
      },
    },
  },
});

const ChatStreamData = defineSchema('ChatMessageStreamData', {
  description:
    'One piece of the streamed answer (a griptape `DeltaMessage` dict), or `{error}` when the exchange failed after the stream began.',
  oneOf: [
    {
      type: 'object',
      required: ['type', 'role', 'usage', 'content'],
      properties: {
        type: { type: 'string', enum: ['DeltaMessage'] },
        role: { type: 'null' },
        usage: { ...UsageSchema, required: ['type', 'input_tokens', 'output_tokens'] },
        content: {
          description: '`null` in the last piece, which carries the usage.',
          oneOf: [
            { type: 'null' },
            {
              type: 'object',
              required: ['type', 'index', 'text'],
              properties: {
                type: { type: 'string', enum: ['TextDeltaMessageContent'] },
                index: { type: 'integer' },
                text: { type: 'string' },
              },
            },
            {
              type: 'object',
              required: ['type', 'index', 'tag', 'name', 'path', 'partial_input'],
              properties: {
                type: { type: 'string', enum: ['ActionCallDeltaMessageContent'] },
                index: { type: 'integer' },
                tag: { type: ['string', 'null'] },
                name: { type: ['string', 'null'] },
                path: { type: ['string', 'null'] },
                partial_input: { type: ['string', 'null'] },
              },
            },
          ],
        },
      },
    },
    { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
  ],
});

const SUMMARY_ERRORS =
  ' 400 `ValidationError` for a request the model cannot be given (e.g. an image for a model that takes no images, ' +
  'or an image URL whose host the outbound address policy refuses) and for one the model provider ' +
  'refused (its message); 503 `ServiceUnavailableError` when no model provider is configured, the provider could not be reached ' +
  '(after retries) or answered unusably, or no answer came within CHAT_MESSAGE_TIME_LIMIT_SECONDS.';

route({
  operationId: 'CreateChatMessage',
  needsDiskSpace: true,
  method: 'post',
  path: '/chat/messages',
  tag: TAG,
  bodyRequired: true,
  // User code in a structure run calls this with its own credential (GriptapeCloudPromptDriver's default key).
  runScoped: true,
  summary:
    'Asks the model and answers with its message (a griptape `Message` dict) once it is complete.' +
    SUMMARY_ERRORS +
    ' A client that disconnects before the answer cancels the exchange.',
  body: RequestSchema,
  responses: { 201: { description: "The model's answer", schema: AnswerSchema } },
  handler: async ({ ctx, deps, caller, body }) => {
    const run = await createChatMessage(deps, caller, body as ChatRunInput['request'], false);
    const gone = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableFinished) gone.abort();
    };
    ctx.res.once('close', onClose);
    try {
      const ended = await waitForChatAnswer(deps, run.run_id, gone.signal);
      if (typeof ended !== 'string') return { status: 201, body: chatAnswer(ended) };
      const why = {
        'client-gone': 'the client disconnected',
        timeout: 'no answer in time',
        shutdown: 'the api shut down',
      }[ended];
      await abandonChatMessage(deps, caller, run, why).catch((err) =>
        deps.log.warn({ err, runId: run.run_id }, 'could not cancel a chat message'),
      );
      if (ended === 'client-gone') return undefined; // nobody to answer
      throw serviceUnavailable(
        ended === 'timeout'
          ? `No answer within ${deps.config.chatMessageJob.timeLimitSeconds} s (CHAT_MESSAGE_TIME_LIMIT_SECONDS); the exchange was cancelled`
          : 'The api is shutting down; the exchange was cancelled: retry',
      );
    } finally {
      ctx.res.off('close', onClose);
    }
  },
});

route({
  operationId: 'CreateChatMessageStream',
  needsDiskSpace: true,
  method: 'post',
  path: '/chat/messages/stream',
  tag: TAG,
  bodyRequired: true,
  runScoped: true,
  summary:
    'Asks the model and streams its answer as Server-Sent Events: one `data: <griptape DeltaMessage dict>` frame per piece ' +
    '(TextDeltaMessageContent `{index: 0, text}`; ActionCallDeltaMessageContent `{index, tag, name, path, partial_input}`, tag ' +
    'name and path in the first piece of each call), then one with the `usage` and no content; the response ends with the ' +
    'answer. An exchange that fails after the response began ends with `data: {"error": "<message>"}` (griptape raises it). ' +
    'Request errors are answered before the stream, as JSON (400). A client that disconnects cancels the exchange: the ' +
    'provider request is aborted.',
  body: RequestSchema,
  responses: { 201: eventStreamResponse('Event stream', ChatStreamData, 'plain') },
  handler: async ({ ctx, deps, caller, body }) => {
    // The stream's place first: a refused stream must not leave an exchange running that nobody reads.
    const release = admitStream(ctx, deps, caller.organizationId);
    const run = await createChatMessage(deps, caller, body as ChatRunInput['request'], true).catch((err) => {
      release();
      throw err;
    });
    const abandon = (why: string) =>
      abandonChatMessage(deps, caller, run, why).catch((err) =>
        deps.log.warn({ err, runId: run.run_id }, 'could not cancel a chat message'),
      );
    // Subscribed before the stream's own listener, so this runs first when the api shuts down: a stream that
    // simply ended would look like a complete answer to the client.
    const unsubscribe = deps.runUpdates?.subscribe(run.run_id, {
      update: () => undefined,
      close: () => {
        if (!ctx.res.writableEnded)
          ctx.res.write(
            `data: ${JSON.stringify({ error: 'The api is shutting down; the exchange was cancelled: retry' })}\n\n`,
          );
        void abandon('the api shut down');
      },
    });
    ctx.res.once('close', () => {
      unsubscribe?.();
      if (!ctx.res.writableFinished) void abandon('the client disconnected');
    });
    // No end frame: griptape's prompt driver reads every `data:` line as a DeltaMessage; the answer ends with its `usage` piece.
    streamRunEvents(ctx, deps, run, 0, chatFrame, { status: 201, end: 'none', admitted: release });
  },
});

// Chat messages through HTTP on the real stack, answered by the local OpenAI-compatible provider
// (test/harness/model-provider.ts). Requests are shaped as griptape 1.13's GriptapeCloudPromptDriver sends
// them; answers are read the way it reads them (a Message dict; SSE `data:` DeltaMessage dicts, `{error}`).
import http from 'node:http';
import type net from 'node:net';
import { expect } from 'chai';
import { createApp } from '../../src/api/app';
import { RunUpdatesHub } from '../../src/persistence/run-updates-hub';
import { FsBlobStore } from '../../src/blobs/fs-blob-store';
import { createModelDriver } from '../../src/drivers/model';
import { createLogger } from '../../src/logger';
import { Run } from '../../src/persistence/entities';
import { createWorker } from '../../src/worker/create-worker';
import { artifact, chatRequest, message, text } from '../harness/chat-requests';
import { as, request } from '../harness/client';
import { readSse } from '../harness/sse';
import { getStack, newTenant, startApi } from '../harness/stack';

const calculator = {
  name: 'CalculatorTool',
  activities: [
    {
      name: 'calculate',
      description: 'Can be used for computing simple numerical or algebraic calculations in Python',
      json_schema: {
        type: 'object',
        properties: { expression: { type: 'string', description: 'Arithmetic expression' } },
        required: ['expression'],
        additionalProperties: false,
        $id: 'Schema',
        $schema: 'http://json-schema.org/draft-07/schema#',
      },
    },
  ],
};

async function waitForExchange(
  predicate: (r: Run) => boolean,
  organizationId: string,
  timeoutMs = 20_000,
): Promise<Run> {
  const { ds } = getStack();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = await ds.getRepository(Run).findBy({ organization_id: organizationId, kind: 'chat' });
    const found = runs.find(predicate);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`no chat exchange matched: ${JSON.stringify(runs.map((r) => r.status))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('chat messages', function () {
  this.timeout(60_000);

  it('answers with a griptape Message dict: the text and the usage; the request is the conversation', async () => {
    const { modelProvider: provider, ds } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, text: 'Hello there.', usage: { prompt_tokens: 7, completion_tokens: 3 } });

    const res = await as(t.key).post('/api/chat/messages', chatRequest(model));
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.deep.include({
      type: 'Message',
      role: 'assistant',
      usage: { type: 'Usage', input_tokens: 7, output_tokens: 3 },
    });
    expect(res.body.content).to.have.length(1);
    expect(res.body.content[0].type).to.equal('TextMessageContent');
    expect(res.body.content[0].artifact).to.include({ type: 'TextArtifact', value: 'Hello there.', reference: null });
    expect(res.body.content[0].artifact.id).to.match(/^[0-9a-f]{32}$/);

    const req = await provider.waitForRequest(model);
    expect(req.stream).to.equal(false);
    expect(req.body.messages).to.deep.equal([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(req.body).to.include({ temperature: 0.1 });
    expect(req.body).to.not.have.any.keys('tools', 'response_format', 'max_tokens');

    const run = await ds.getRepository(Run).findOneByOrFail({ organization_id: t.organizationId, kind: 'chat' });
    expect(run).to.include({
      status: 'SUCCEEDED',
      model: `local/${model}`,
      resource_id: null,
      assistant_id: null,
      created_by: t.userId,
    });
    expect(run.usage).to.deep.equal({ input_tokens: 7, output_tokens: 3 });
    expect((run.input as { stream: boolean }).stream).to.equal(false);
  });

  it('streams DeltaMessage dicts in order, then the usage, and ends the response', async () => {
    const { modelProvider: provider, baseUrl } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    const chunks = ['The ', 'quick ', 'brown ', 'fox.'];
    provider.script({ model, chunks, chunkDelayMs: 10, usage: { prompt_tokens: 5, completion_tokens: 4 } });

    const sse = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, { body: chatRequest(model) });
    expect(sse.status, JSON.stringify(sse.body)).to.equal(201);
    expect(sse.contentType).to.contain('text/event-stream');
    expect(sse.ended).to.equal(true);
    const data = sse.frames.map((f) => f.data);
    expect(data.slice(0, -1).map((d) => d.content)).to.deep.equal(
      chunks.map((c) => ({ type: 'TextDeltaMessageContent', index: 0, text: c })),
    );
    expect(data.every((d) => d.type === 'DeltaMessage' && !('error' in d))).to.equal(true);
    expect(data.at(-1)).to.deep.equal({
      type: 'DeltaMessage',
      role: null,
      usage: { type: 'Usage', input_tokens: 5, output_tokens: 4 },
      content: null,
    });
    expect((await provider.waitForRequest(model)).stream).to.equal(true);
  });

  it('offers the tools as functions and returns a tool call as ActionCallMessageContent (and streamed as ActionCallDeltaMessageContent)', async () => {
    const { modelProvider: provider, baseUrl } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    const call = { id: 'call_abc', name: 'CalculatorTool_calculate', arguments: '{"expression": "6*7"}' };
    provider.script(
      { model, text: 'Let me compute.', toolCalls: [call] },
      { model, toolCalls: [call], usage: { prompt_tokens: 9, completion_tokens: 4 } },
    );

    const res = await as(t.key).post('/api/chat/messages', chatRequest(model, { tools: [calculator] }));
    expect(res.status, res.text).to.equal(201);
    const [said, called] = res.body.content;
    expect(said.artifact.value).to.equal('Let me compute.');
    expect(called.type).to.equal('ActionCallMessageContent');
    expect(called.artifact.type).to.equal('ActionArtifact');
    expect(called.artifact.value).to.deep.equal({
      type: 'ToolAction',
      tag: 'call_abc',
      name: 'CalculatorTool',
      path: 'calculate',
      input: { expression: '6*7' },
    });
    const req = await provider.waitForRequest(model);
    expect(req.body.tools).to.deep.equal([
      {
        type: 'function',
        function: {
          name: 'CalculatorTool_calculate',
          description: calculator.activities[0].description,
          parameters: calculator.activities[0].json_schema,
        },
      },
    ]);
    expect(req.body).to.not.have.property('tool_choice');

    const sse = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, {
      body: chatRequest(model, { tools: [calculator] }),
    });
    expect(sse.status).to.equal(201);
    const pieces = sse.frames.map((f) => f.data.content).filter((c) => c?.type === 'ActionCallDeltaMessageContent');
    expect(pieces[0]).to.deep.equal({
      type: 'ActionCallDeltaMessageContent',
      index: 0,
      tag: 'call_abc',
      name: 'CalculatorTool',
      path: 'calculate',
      partial_input: '',
    });
    expect(pieces.slice(1).every((p) => p.tag === null && p.name === null && p.index === 0)).to.equal(true);
    expect(pieces.map((p) => p.partial_input).join('')).to.equal(call.arguments);
    expect(sse.frames.at(-1)!.data.usage).to.deep.include({ input_tokens: 9, output_tokens: 4 });
  });

  it('offers a tool activity whose `<tool>_<activity>` is too long for providers under a shortened name, and maps its calls back', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    const tool = {
      name: 'T'.repeat(40),
      activities: [
        { name: 'a'.repeat(40), description: '', json_schema: { type: 'object' } },
        { name: 'b', description: '', json_schema: { type: 'object' } },
      ],
    };
    provider.script({
      model,
      respond: (body) => ({ toolCalls: [{ id: 'call_1', name: body.tools[0].function.name, arguments: '{"x": 1}' }] }),
    });
    const res = await as(t.key).post('/api/chat/messages', chatRequest(model, { tools: [tool] }));
    expect(res.status, res.text).to.equal(201);
    const names = (await provider.waitForRequest(model)).body.tools.map((f: any) => f.function.name);
    expect(names[0])
      .to.have.length.at.most(64)
      .and.match(/^[A-Za-z0-9_-]+$/);
    expect(names[1]).to.equal(`${tool.name}_b`);
    expect(res.body.content.at(-1).artifact.value).to.deep.include({
      tag: 'call_1',
      name: tool.name,
      path: tool.activities[0].name,
      input: { x: 1 },
    });
  });

  it("sends tool results back as tool turns after the assistant's tool calls", async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, respond: (body) => ({ text: `The answer is ${body.messages.at(-1)!.content}.` }) });
    const action = {
      type: 'ToolAction',
      tag: 'call_abc',
      name: 'CalculatorTool',
      path: 'calculate',
      input: { expression: '6*7' },
    };

    const res = await as(t.key).post(
      '/api/chat/messages',
      chatRequest(model, {
        tools: [calculator],
        messages: [
          message('user', text('What is 6*7?')),
          message('assistant', text('Let me compute.'), {
            type: 'ActionCallMessageContent',
            artifact: artifact(action as never, 'ActionArtifact'),
          }),
          message('user', { type: 'ActionResultMessageContent', artifact: artifact('42'), action }),
        ],
      }),
    );
    expect(res.status, res.text).to.equal(201);
    expect(res.body.content[0].artifact.value).to.equal('The answer is 42.');
    const req = await provider.waitForRequest(model);
    expect(req.body.messages).to.deep.equal([
      { role: 'user', content: 'What is 6*7?' },
      {
        role: 'assistant',
        content: 'Let me compute.',
        tool_calls: [
          {
            id: 'call_abc',
            type: 'function',
            function: { name: 'CalculatorTool_calculate', arguments: '{"expression":"6*7"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: '42' },
    ]);
  });

  it('structured output: `native` holds the provider to output_schema; `tool` requires a tool call', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
      $id: 'Output Format',
      $schema: 'http://json-schema.org/draft-07/schema#',
    };
    provider.script(
      { model, text: '{"answer": "hello"}' },
      { model, toolCalls: [{ name: 'StructuredOutputTool_provide_output', arguments: '{"answer": "hi"}' }] },
    );

    const res = await as(t.key).post('/api/chat/messages', chatRequest(model, { output_schema: schema }));
    expect(res.status, res.text).to.equal(201);
    expect(JSON.parse(res.body.content[0].artifact.value)).to.deep.equal({ answer: 'hello' });
    const req = await provider.waitForRequest(model);
    expect(req.body.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'Output', schema, strict: true },
    });

    const structuredTool = {
      name: 'StructuredOutputTool',
      activities: [{ name: 'provide_output', description: 'Final answer', json_schema: schema }],
    };
    const viaTool = await as(t.key).post(
      '/api/chat/messages',
      chatRequest(model, {
        output_schema: schema,
        tools: [structuredTool],
        config: { structured_output_strategy: 'tool' },
      }),
    );
    expect(viaTool.status, viaTool.text).to.equal(201);
    expect(viaTool.body.content[0].artifact.value).to.deep.include({
      name: 'StructuredOutputTool',
      path: 'provide_output',
      input: { answer: 'hi' },
    });
    const second = await provider.waitForRequest(model, 2);
    expect(second.body.tool_choice).to.equal('required');
    expect(second.body).to.not.have.property('response_format');
    expect(second.body.tools.map((f: any) => f.function.name)).to.deep.equal(['StructuredOutputTool_provide_output']);
  });

  it("provider failures: a refused request is a 400 with the provider's message, an unreachable provider a 503; streamed as {error}", async () => {
    const { modelProvider: provider, baseUrl, config } = getStack();
    const t = await newTenant();
    const rejected = provider.uniqueModel();
    provider.script({
      model: rejected,
      error: { status: 400, message: 'max_tokens is too large for this model' },
      times: 2,
    });
    const res = await as(t.key).post('/api/chat/messages', chatRequest(rejected, { config: { max_tokens: 999999 } }));
    expect(res.status, res.text).to.equal(400);
    expect(res.body.type).to.equal('ValidationError');
    expect(res.body.errors[0].message).to.contain('max_tokens is too large for this model');
    expect((await provider.waitForRequest(rejected)).body.max_tokens).to.equal(999999);

    const streamed = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, { body: chatRequest(rejected) });
    expect(streamed.status).to.equal(201);
    expect(streamed.ended).to.equal(true);
    expect(streamed.frames.map((f) => f.data)).to.have.length(1);
    expect(streamed.frames[0].data.error).to.contain('max_tokens is too large for this model');

    const down = provider.uniqueModel();
    provider.script({
      model: down,
      error: { status: 503, message: 'overloaded' },
      times: config.models.maxRetries + 1,
    });
    const unreachable = await as(t.key).post('/api/chat/messages', chatRequest(down));
    expect(unreachable.status, unreachable.text).to.equal(503);
    expect(unreachable.body.type).to.equal('ServiceUnavailableError');
    expect(unreachable.body.errors[0].message).to.contain('overloaded');
  });

  it('a provider error in the middle of the stream ends it with a data: {error} frame after the pieces sent', async () => {
    const { modelProvider: provider, baseUrl, ds } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({
      model,
      text: 'one two three four five',
      streamErrorAfterChunks: { chunks: 3, message: 'GPU fell over' },
    });

    const sse = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, { body: chatRequest(model) });
    expect(sse.status).to.equal(201);
    expect(sse.ended).to.equal(true);
    const data = sse.frames.map((f) => f.data);
    expect(data.slice(0, -1).map((d) => d.content.text)).to.deep.equal(['one ', 'two ']);
    expect(Object.keys(data.at(-1))).to.deep.equal(['error']);
    expect(data.at(-1).error).to.contain('GPU fell over');
    const run = await ds.getRepository(Run).findOneByOrFail({ organization_id: t.organizationId, kind: 'chat' });
    expect(run.status).to.equal('ERROR');
    expect(run.status_detail).to.include({ reason: 'ModelUnreachable' });
  });

  it('a client that leaves a stalled stream cancels the exchange: the provider sees the disconnect', async () => {
    const { modelProvider: provider, baseUrl } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, text: 'one two three four five six', stallAfterChunks: 3 });

    const sse = await readSse(`${baseUrl}/api/chat/messages/stream`, t.key, { body: chatRequest(model), stopAfter: 2 });
    expect(sse.frames.map((f) => f.data.content.text)).to.deep.equal(['one ', 'two ']);
    const req = await provider.waitForRequest(model);
    expect(await req.ended).to.equal('disconnected');
    const run = await waitForExchange((r) => r.status === 'CANCELLED', t.organizationId);
    expect(run.status_detail).to.deep.include({ reason: 'Cancelled' });
    expect((run.status_detail as { requested_by: string }).requested_by).to.equal(
      `${t.userId} (the client disconnected)`,
    );
  });

  it('a client that stops waiting for a non-streamed answer cancels the exchange too', async () => {
    const { modelProvider: provider, baseUrl } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, text: 'never sent', stallBeforeAnswer: true });
    const abort = new AbortController();
    const pending = fetch(`${baseUrl}/api/chat/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatRequest(model)),
      signal: abort.signal,
    }).catch((err: Error) => err);
    const req = await provider.waitForRequest(model);
    await req.stalled;
    abort.abort();
    expect(await pending).to.be.instanceOf(Error);
    expect(await req.ended).to.equal('disconnected');
    const ended = await waitForExchange((r) => r.status === 'CANCELLED', t.organizationId);
    expect((ended.status_detail as { requested_by: string }).requested_by).to.equal(
      `${t.userId} (the client disconnected)`,
    );
  });

  it('an api process that shuts down ends its chat streams with {error}, answers its waiting requests 503 and cancels both', async () => {
    const { modelProvider: provider, env } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script(
      { model, text: 'one two three four', stallAfterChunks: 3 },
      { model, text: 'never sent', stallBeforeAnswer: true },
    );
    const api = await startApi(env.client);
    try {
      const streaming = readSse(`${api.baseUrl}/api/chat/messages/stream`, t.key, { body: chatRequest(model) });
      const first = await provider.waitForRequest(model);
      await first.stalled;
      const waiting = request('POST', `${api.baseUrl}/api/chat/messages`, chatRequest(model), { key: t.key });
      const second = await provider.waitForRequest(model, 2);
      await second.stalled;

      await api.runUpdates.close(); // what the api does first on SIGTERM
      const sse = await streaming;
      expect(sse.ended).to.equal(true);
      expect(sse.frames.at(-1)!.data.error).to.contain('shutting down');
      const res = await waiting;
      expect(res.status, res.text).to.equal(503);
      expect(res.body.errors[0].message).to.contain('shutting down');
      expect(await first.ended).to.equal('disconnected');
      expect(await second.ended).to.equal('disconnected');
    } finally {
      await api.close();
    }
  });

  it('refuses requests it cannot carry with a 400 that points at the part', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    const image = await api.post(
      '/api/chat/messages',
      chatRequest(model, {
        messages: [
          message('user', text('What is this?'), {
            type: 'ImageMessageContent',
            artifact: { type: 'ImageArtifact', value: 'iVBORw0KGgo=', format: 'png' },
          }),
        ],
      }),
    );
    // The stack's models take text only (images: test/api/chat-media.test.ts).
    expect(image.status).to.equal(400);
    expect(image.body.errors[0]).to.deep.include({ path: '/body/messages/0/content/1' });
    expect(image.body.errors[0].message).to.contain(`Model "local/${model}" does not take image input`);

    const nullContent = await api.post('/api/chat/messages', chatRequest(model, { messages: [message('user', null)] }));
    expect(nullContent.status, nullContent.text).to.equal(400);
    expect(nullContent.body.errors[0].path).to.equal('/body/messages/0/content/0');
    const callFromUser = await api.post(
      '/api/chat/messages',
      chatRequest(model, {
        messages: [
          message('user', {
            type: 'ActionCallMessageContent',
            artifact: { type: 'ActionArtifact', value: { tag: 't', name: 'n' } },
          }),
        ],
      }),
    );
    expect(callFromUser.status).to.equal(400);
    expect(callFromUser.body.errors[0].path).to.equal('/body/messages/0/content/0/type');

    const noConfig = await api.post('/api/chat/messages', { messages: [message('user', text('hi'))], tools: [] });
    expect(noConfig.status).to.equal(400);
    expect(noConfig.body.errors[0].path).to.equal('/body/driver_configuration');
    const badTool = await api.post(
      '/api/chat/messages/stream',
      chatRequest(model, {
        tools: [{ name: 'my tool', activities: [{ name: 'go', description: '', json_schema: {} }] }],
      }),
    );
    expect(badTool.status).to.equal(400);
    expect(badTool.headers.get('content-type')).to.contain('application/json');
    expect(badTool.body.errors[0].path).to.equal('/body/tools/0/name');
    // Members the interface requires: a message's usage, a content's artifact, an activity's description and json_schema.
    const { usage: _, ...noUsage } = message('user', text('hi'));
    for (const [body, path] of [
      [chatRequest(model, { messages: [noUsage] }), '/body/messages/0/usage'],
      [
        chatRequest(model, { messages: [message('user', { type: 'TextMessageContent' })] }),
        '/body/messages/0/content/0/artifact',
      ],
      [
        chatRequest(model, { tools: [{ name: 'T', activities: [{ name: 'go', description: '' }] }] }),
        '/body/tools/0/activities/0/json_schema',
      ],
    ] as const) {
      const missing = await api.post('/api/chat/messages', body);
      expect(missing.status, path).to.equal(400);
      expect(missing.body.errors.map((e: any) => e.path)).to.include(path);
    }
    const nul = await api.post(
      '/api/chat/messages',
      chatRequest(model, { messages: [message('user', text('a\u0000b'))] }),
    );
    expect(nul.status).to.equal(400);
    expect(nul.body.errors[0].path).to.equal('/body/messages/0/content/0/artifact/value');
    const reserved = await api.post(
      '/api/chat/messages',
      chatRequest(model, { config: { extra_params: { stream: true } } }),
    );
    expect(reserved.status).to.equal(400);
    expect((await api.post('/api/chat/messages', chatRequest(model, { messages: [] }))).status).to.equal(400);
    expect(provider.requestsFor(model)).to.have.length(0);
    expect((await request('POST', '/api/chat/messages', chatRequest(model))).status).to.equal(401);
  });

  it('without a model provider configured: 503 with how to configure one (a worker without models)', async () => {
    const s = getStack();
    const t = await newTenant();
    const taskQueue = 'tarmac-test-no-models';
    const config = { ...s.config, temporal: { ...s.config.temporal, taskQueue } };
    const models = createModelDriver({ providers: {}, timeoutSeconds: 5, maxRetries: 0 });
    const worker = await createWorker({
      connection: s.env.nativeConnection,
      namespace: s.env.namespace ?? 'default',
      taskQueue,
      deps: { ...s.activityDeps, models },
      workflowBundle: s.workflowBundle,
      shutdownGraceTime: '1 second',
    });
    const log = createLogger(config.logLevel, 'test-api-no-models');
    const runUpdates = new RunUpdatesHub((s.ds.options as { url: string }).url, log);
    await runUpdates.start();
    const app = createApp({
      config,
      ds: s.ds,
      temporal: s.env.client,
      blobs: new FsBlobStore(config.blobDir),
      box: s.box,
      log,
      runUpdates,
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      await worker.runUntil(async () => {
        const res = await request('POST', `${base}/api/chat/messages`, chatRequest('anything'), { key: t.key });
        expect(res.status, res.text).to.equal(503);
        expect(res.body.type).to.equal('ServiceUnavailableError');
        expect(res.body.errors[0].message).to.contain('MODEL_PROVIDERS').and.contain('DEFAULT_MODEL');
        const sse = await readSse(`${base}/api/chat/messages/stream`, t.key, { body: chatRequest('anything') });
        expect(sse.frames.map((f) => Object.keys(f.data))).to.deep.equal([['error']]);
        expect(sse.frames[0].data.error).to.contain('MODEL_PROVIDERS');
      });
    } finally {
      await runUpdates.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    }
  });
});

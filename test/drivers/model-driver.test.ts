// The model driver over real HTTP, through the real `openai` package, against the local OpenAI-compatible
// provider (test/harness/model-provider.ts). No stack needed, but it runs under the same mocha hooks.
import { expect } from 'chai';
import type { ModelsConfig } from '../../src/config';
import {
  createModelDriver,
  isAbortError,
  resolveModel,
  ModelError,
  type CompletionDelta,
  type CompletionRequest,
} from '../../src/drivers/model';
import { isStrictSchema, maxTokensField } from '../../src/drivers/model/openai-compatible';
import { startModelProvider, type ModelProvider } from '../harness/model-provider';
import { freePort, getStack } from '../harness/stack';

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('model driver (OpenAI-compatible)', () => {
  let a: ModelProvider;
  let b: ModelProvider;
  let models: Omit<ModelsConfig, 'inputs'>;
  const ask = (model: string, extra: Partial<CompletionRequest> = {}): CompletionRequest => ({
    model,
    turns: [{ role: 'user', content: 'Say hello' }],
    stream: false,
    ...extra,
  });

  before(async () => {
    [a, b] = await Promise.all([startModelProvider(), startModelProvider()]);
    models = {
      providers: { a: { baseUrl: a.baseUrl, apiKey: 'key-of-a' }, b: { baseUrl: b.baseUrl } },
      defaultModel: 'a/default-model',
      timeoutSeconds: 30,
      maxRetries: 2,
    };
  });
  after(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('embeds texts through /v1/embeddings, in order, and aborts a hanging request', async () => {
    const driver = createModelDriver(models);
    const answer = await driver.embed({ model: 'b/embed', input: ['red apple', 'green pear', 'red apple'] });
    expect(answer.model).to.equal('b/embed');
    expect(answer.vectors).to.have.length(3);
    expect(answer.vectors[0]).to.deep.equal(answer.vectors[2]).and.have.length(64);
    expect(answer.vectors[0]).to.not.deep.equal(answer.vectors[1]);
    expect(b.embeddingRequests.at(-1)).to.deep.include({
      model: 'embed',
      input: ['red apple', 'green pear', 'red apple'],
      status: 200,
    });
    b.stallEmbeddings('hang');
    const controller = new AbortController();
    const pending = driver.embed({ model: 'b/hang', input: ['x'], signal: controller.signal });
    setTimeout(() => controller.abort(new Error('job cancelled')), 100);
    expect(isAbortError(await failure(pending))).to.equal(true);
  });

  it('answers with text and usage, mapping every kind of turn', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: 'Hello there', usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const completion = await createModelDriver(models).complete({
      model: `a/${m}`,
      stream: false,
      turns: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is 1+2?' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'add', arguments: '{"a":1,"b":2}' }] },
        { role: 'tool', toolCallId: 'call_1', content: '3' },
        { role: 'assistant', content: 'It is 3.' },
        { role: 'user', content: 'Say hello' },
      ],
    });
    expect(completion).to.deep.equal({
      model: `a/${m}`,
      text: 'Hello there',
      toolCalls: [],
      usage: { input_tokens: 12, output_tokens: 3 },
      finishReason: 'stop',
    });
    const [req] = a.requestsFor(m);
    expect(req.headers.authorization).to.equal('Bearer key-of-a');
    expect(req.body.stream).to.not.equal(true);
    expect(req.body.messages).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 1+2?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '3' },
      { role: 'assistant', content: 'It is 3.' },
      { role: 'user', content: 'Say hello' },
    ]);
    expect(await req.ended).to.equal('completed');
  });

  it('streams text deltas in order and assembles the completion', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, chunks: ['Hel', 'lo', ', wor', 'ld'], usage: { prompt_tokens: 5, completion_tokens: 4 } });
    const deltas: CompletionDelta[] = [];
    const completion = await createModelDriver(models).complete(ask(`a/${m}`, { stream: true }), (d) => {
      deltas.push(d);
    });
    expect(deltas).to.deep.equal(['Hel', 'lo', ', wor', 'ld'].map((text) => ({ kind: 'text', text })));
    expect(completion).to.deep.equal({
      model: `a/${m}`,
      text: 'Hello, world',
      toolCalls: [],
      usage: { input_tokens: 5, output_tokens: 4 },
      finishReason: 'stop',
    });
    const [req] = a.requestsFor(m);
    expect(req.body).to.include({ stream: true });
    expect(req.body.stream_options).to.deep.equal({ include_usage: true });
  });

  it('counts usage a provider does not report as zero', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: 'no usage here', usage: null }, { model: m, text: 'nor here', usage: null });
    const driver = createModelDriver(models);
    expect((await driver.complete(ask(`a/${m}`, { stream: true }))).usage).to.deep.equal({
      input_tokens: 0,
      output_tokens: 0,
    });
    expect((await driver.complete(ask(`a/${m}`))).usage).to.deep.equal({ input_tokens: 0, output_tokens: 0 });
  });

  it('streams tool calls in pieces (id and name first) and assembles them', async () => {
    const m = a.uniqueModel();
    a.script({
      model: m,
      text: 'Let me check.',
      toolCalls: [
        { id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}', argumentChunks: ['{"ci', 'ty":"Pa', 'ris"}'] },
        { id: 'call_t', name: 'time', arguments: '{}' },
      ],
    });
    const deltas: CompletionDelta[] = [];
    const completion = await createModelDriver(models).complete(ask(`a/${m}`, { stream: true }), (d) => {
      deltas.push(d);
    });
    expect(deltas).to.deep.equal([
      { kind: 'text', text: 'Let ' },
      { kind: 'text', text: 'me ' },
      { kind: 'text', text: 'check.' },
      { kind: 'tool-call', index: 0, id: 'call_w', name: 'weather', argumentsPart: '' },
      { kind: 'tool-call', index: 0, argumentsPart: '{"ci' },
      { kind: 'tool-call', index: 0, argumentsPart: 'ty":"Pa' },
      { kind: 'tool-call', index: 0, argumentsPart: 'ris"}' },
      { kind: 'tool-call', index: 1, id: 'call_t', name: 'time', argumentsPart: '' },
      { kind: 'tool-call', index: 1, argumentsPart: '{}' },
    ]);
    expect(completion.text).to.equal('Let me check.');
    expect(completion.finishReason).to.equal('tool_calls');
    expect(completion.toolCalls).to.deep.equal([
      { id: 'call_w', name: 'weather', arguments: '{"city":"Paris"}' },
      { id: 'call_t', name: 'time', arguments: '{}' },
    ]);
  });

  it('returns tool calls of a JSON answer, and sends tools as functions', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, toolCalls: [{ id: 'call_x', name: 'add', arguments: '{"a":1,"b":2}' }] });
    const parameters = {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    };
    const completion = await createModelDriver(models).complete(
      ask(`a/${m}`, { tools: [{ name: 'add', description: 'Adds.', parameters }] }),
    );
    expect(completion).to.deep.include({
      text: '',
      finishReason: 'tool_calls',
      toolCalls: [{ id: 'call_x', name: 'add', arguments: '{"a":1,"b":2}' }],
    });
    expect(a.requestsFor(m)[0].body.tools).to.deep.equal([
      { type: 'function', function: { name: 'add', description: 'Adds.', parameters } },
    ]);
  });

  it('asks for structured output with response_format json_schema, strict only when the schema allows it', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: '{"answer":"yes"}' }, { model: m, text: '{"answer":"no"}' });
    const strict = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const loose = {
      type: 'object',
      properties: { answer: { type: 'string' }, why: { type: 'string' } },
      required: ['answer'],
    };
    const driver = createModelDriver(models);
    expect((await driver.complete(ask(`a/${m}`, { outputSchema: { name: 'verdict', schema: strict } }))).text).to.equal(
      '{"answer":"yes"}',
    );
    await driver.complete(ask(`a/${m}`, { outputSchema: { name: 'verdict', schema: loose } }));
    const [first, second] = a.requestsFor(m);
    expect(first.body.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'verdict', schema: strict, strict: true },
    });
    expect(second.body.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'verdict', schema: loose, strict: false },
    });
    expect(
      isStrictSchema({
        type: 'object',
        properties: { xs: { type: 'array', items: loose } },
        required: ['xs'],
        additionalProperties: false,
      }),
    ).to.equal(false);
  });

  it('maps maxTokens and temperature, and spreads extraParams into the body', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: 'ok' }, { model: m, text: 'ok' });
    const driver = createModelDriver(models);
    await driver.complete(ask(`a/${m}`, { maxTokens: 50, temperature: 0.2, extraParams: { top_p: 0.9, seed: 7 } }));
    await driver.complete(ask(`a/${m}`, { maxTokens: 50, extraParams: { max_tokens: 99, temperature: 1 } }));
    const [first, second] = a.requestsFor(m);
    expect(first.body).to.include({ max_tokens: 50, temperature: 0.2, top_p: 0.9, seed: 7 });
    expect(first.body).to.not.have.property('max_completion_tokens');
    expect(second.body).to.include({ max_tokens: 99, temperature: 1 });
    expect(maxTokensField('https://api.openai.com/v1')).to.equal('max_completion_tokens');
    expect(maxTokensField('https://myres.openai.azure.com/openai/v1')).to.equal('max_completion_tokens');
    expect(maxTokensField('http://127.0.0.1:11434/v1')).to.equal('max_tokens');
  });

  it('routes model names across providers and the default', async () => {
    const m = b.uniqueModel();
    b.script({ model: m, text: 'from b' });
    a.script(
      { model: 'plain', text: 'from a' },
      { model: 'meta-llama/Llama-3.1-8B', text: 'from a' },
      { model: 'default-model', text: 'default' },
    );
    const driver = createModelDriver(models);
    expect(await driver.complete(ask(`b/${m}`))).to.include({ model: `b/${m}`, text: 'from b' });
    expect(b.requestsFor(m)[0].headers.authorization).to.equal('Bearer no-key');
    expect(await driver.complete(ask('plain'))).to.include({ model: 'a/plain', text: 'from a' });
    expect(await driver.complete(ask('meta-llama/Llama-3.1-8B'))).to.include({ model: 'a/meta-llama/Llama-3.1-8B' });
    expect(await driver.complete({ turns: [{ role: 'user', content: 'hi' }], stream: false })).to.include({
      model: 'a/default-model',
      text: 'default',
    });
    expect(resolveModel(models, 'b/org/model')).to.deep.equal({ provider: 'b', model: 'org/model' });
    expect(resolveModel(models, 'constructor/x')).to.deep.equal({ provider: 'a', model: 'constructor/x' });
  });

  it('says how to configure a provider when none serves the model', async () => {
    const nothing = createModelDriver({ providers: {}, timeoutSeconds: 30, maxRetries: 0 });
    const err = await failure(nothing.complete(ask('gpt-4.1-mini')));
    expect(err).to.be.instanceOf(ModelError).and.include({ kind: 'not-configured' });
    for (const hint of [
      'no model provider is configured',
      'MODEL_PROVIDERS',
      'DEFAULT_MODEL',
      'OPENAI_API_KEY',
      'openai/gpt-4.1-mini',
      'ollama=http://127.0.0.1:11434/v1',
    ]) {
      expect(err.message).to.include(hint);
    }
    const noDefault = { ...models, defaultModel: undefined };
    const err2 = await failure(createModelDriver(noDefault).complete(ask('plain-name')));
    expect(err2).to.include({ kind: 'not-configured' });
    expect(err2.message).to.include(
      'Model "plain-name" names no configured model provider (configured providers: a, b; DEFAULT_MODEL is not set)',
    );
    const m = a.uniqueModel();
    a.script({ model: m, text: 'qualified names need no default' });
    expect((await createModelDriver(noDefault).complete(ask(`a/${m}`))).text).to.equal(
      'qualified names need no default',
    );
  });

  it('reports a 400 as rejected with the provider message, without retrying', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, error: { status: 400, message: "Invalid value for 'temperature'", code: 'invalid_value' } });
    const err = await failure(createModelDriver(models).complete(ask(`a/${m}`, { stream: true })));
    expect(err).to.be.instanceOf(ModelError).and.include({ kind: 'rejected', status: 400 });
    expect(err.message).to.equal(`Model provider "a" rejected the request (400): Invalid value for 'temperature'`);
    expect(a.requestsFor(m)).to.have.length(1);
  });

  it('reports a 401 as rejected', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, error: { status: 401, message: 'Incorrect API key provided', code: 'invalid_api_key' } });
    const err = await failure(createModelDriver(models).complete(ask(`a/${m}`)));
    expect(err).to.include({ kind: 'rejected', status: 401 });
    expect(err.message).to.include('Incorrect API key provided').and.not.include('key-of-a');
  });

  it('retries a 500 and then reports unreachable (1 + MODEL_MAX_RETRIES attempts)', async () => {
    const m = a.uniqueModel();
    a.script(
      { model: m, error: { status: 500, message: 'The server had an error' }, times: 3 },
      { model: m, text: 'never reached' },
    );
    const err = await failure(createModelDriver(models).complete(ask(`a/${m}`, { stream: true })));
    expect(err).to.be.instanceOf(ModelError).and.include({ kind: 'unreachable', status: 500 });
    expect(err.message).to.include('The server had an error');
    expect(a.requestsFor(m)).to.have.length(3);
    expect(a.unused(m)).to.have.length(1);
  });

  it('retries a 429 and answers once the provider does', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, error: { status: 429, message: 'Rate limit reached' } }, { model: m, text: 'finally' });
    const deltas: CompletionDelta[] = [];
    const completion = await createModelDriver(models).complete(ask(`a/${m}`, { stream: true }), (d) => {
      deltas.push(d);
    });
    expect(completion.text).to.equal('finally');
    expect(deltas).to.deep.equal([{ kind: 'text', text: 'finally' }]);
    expect(a.requestsFor(m)).to.have.length(2);
  });

  it('reports a refused connection as unreachable', async () => {
    const port = await freePort();
    const driver = createModelDriver({
      providers: { gone: { baseUrl: `http://127.0.0.1:${port}/v1` } },
      defaultModel: 'gone/x',
      timeoutSeconds: 30,
      maxRetries: 0,
    });
    const err = await failure(driver.complete(ask('x', { stream: true })));
    expect(err).to.be.instanceOf(ModelError).and.include({ kind: 'unreachable' });
    expect(err.message).to.match(/^Model provider "gone" could not be reached \(Connection error: .*ECONNREFUSED/);
  });

  it('reports a stream that breaks off or carries an error event as unreachable', async () => {
    const m = a.uniqueModel();
    a.script(
      { model: m, text: 'one two three', dropAfterChunks: 2 },
      { model: m, text: 'one two three', streamErrorAfterChunks: { chunks: 2, message: 'CUDA out of memory' } },
    );
    const driver = createModelDriver(models);
    const dropped = await failure(driver.complete(ask(`a/${m}`, { stream: true })));
    expect(dropped).to.be.instanceOf(ModelError).and.include({ kind: 'unreachable' });
    const errored = await failure(driver.complete(ask(`a/${m}`, { stream: true })));
    expect(errored).to.be.instanceOf(ModelError).and.include({ kind: 'unreachable' });
    expect(errored.message).to.include('CUDA out of memory');
  });

  it('stops the HTTP stream at once when aborted: the provider sees the disconnect, no more deltas arrive', async () => {
    const m = a.uniqueModel();
    // role chunk + 'one ' .. 'five ' sent, then silence: whatever was sent but not yet delivered must be dropped.
    a.script({ model: m, text: 'one two three four five six', stallAfterChunks: 6 });
    const controller = new AbortController();
    const deltas: CompletionDelta[] = [];
    const err = await failure(
      createModelDriver(models).complete(ask(`a/${m}`, { stream: true, signal: controller.signal }), (d) => {
        deltas.push(d);
        if (deltas.length === 2) controller.abort(new Error('run cancelled'));
      }),
    );
    expect(isAbortError(err)).to.equal(true);
    expect((err.cause as Error).message).to.equal('run cancelled');
    expect(deltas.map((d) => (d.kind === 'text' ? d.text : d))).to.deep.equal(['one ', 'two ']);
    const [req] = a.requestsFor(m);
    expect(await req.ended).to.equal('disconnected');
  });

  it('aborts a stalled stream: the provider sees the disconnect', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: 'one two three', stallAfterChunks: 2 });
    const controller = new AbortController();
    const pending = createModelDriver(models).complete(ask(`a/${m}`, { stream: true, signal: controller.signal }));
    const req = await a.waitForRequest(m);
    await req.stalled;
    controller.abort();
    expect(isAbortError(await failure(pending))).to.equal(true);
    expect(await req.ended).to.equal('disconnected');
  });

  it('rejects at once when aborted while the package waits to retry', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, error: { status: 503, message: 'busy', retryAfterMs: 30_000 } });
    const controller = new AbortController();
    const pending = createModelDriver(models).complete(ask(`a/${m}`, { stream: true, signal: controller.signal }));
    await (
      await a.waitForRequest(m)
    ).ended;
    controller.abort();
    expect(isAbortError(await failure(pending))).to.equal(true);
    expect(a.requestsFor(m)).to.have.length(1);
  });

  it('stops the stream when onDelta throws, and passes that error through', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: 'one two three', stallAfterChunks: 3 });
    const boom = new Error('database down');
    const err = await failure(
      createModelDriver(models).complete(ask(`a/${m}`, { stream: true }), () => {
        throw boom;
      }),
    );
    expect(err).to.equal(boom);
    expect(await a.requestsFor(m)[0].ended).to.equal('disconnected');
  });

  it('rejects at once with an AbortError for a signal aborted before the call', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await failure(createModelDriver(models).complete(ask('a/whatever', { signal: controller.signal })));
    expect(isAbortError(err)).to.equal(true);
  });

  it('gives up on a stream silent for MODEL_REQUEST_TIMEOUT_SECONDS', async () => {
    const m = a.uniqueModel();
    a.script({ model: m, text: 'one two three', stallAfterChunks: 2 });
    const err = await failure(
      createModelDriver({ ...models, timeoutSeconds: 1 }).complete(ask(`a/${m}`, { stream: true })),
    );
    expect(err).to.be.instanceOf(ModelError).and.include({ kind: 'unreachable' });
    expect(err.message).to.include('sent nothing for 1 s');
    expect(await a.requestsFor(m)[0].ended).to.equal('disconnected');
  });

  it('answers GET /v1/models and unscripted requests as an OpenAI server would', async () => {
    const list = (await (await fetch(`${a.baseUrl}/models`)).json()) as { object: string; data: Array<{ id: string }> };
    expect(list.object).to.equal('list');
    expect(list.data.map((x) => x.id)).to.include('test-model');
    const err = await failure(createModelDriver(models).complete(ask('a/unscripted')));
    expect(err).to.include({ kind: 'rejected', status: 400 });
    expect(err.message).to.include('no scripted reply for model "unscripted"');
  });

  it("is the stack worker's driver, with the stack's provider as `local`", async () => {
    const { modelProvider, activityDeps } = getStack();
    const m = modelProvider.uniqueModel();
    modelProvider.script({ model: m, text: 'from the stack' });
    expect(await activityDeps.models.complete(ask(`local/${m}`))).to.include({
      model: `local/${m}`,
      text: 'from the stack',
    });
  });
});

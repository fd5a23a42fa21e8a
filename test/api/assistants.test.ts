// Assistants and assistant runs through HTTP on the real stack, answered by the local OpenAI-compatible
// provider (test/harness/model-provider.ts): rulesets and threads in the prompt, streamed chunks over SSE,
// a tool call round trip through a real tool run, cancel of a streaming run, and provider failures.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { CALCULATOR_TOOL, PY_PRELUDE, TERMINAL, waitForAssistantRun } from '../harness/runs';
import { readSse } from '../harness/sse';
import { getStack, newTenant } from '../harness/stack';

/** A structure that answers with its args joined, as griptape's FinishStructureRunEvent does. */
const SHOUT_STRUCTURE = `${PY_PRELUDE}
out = {"type": "TextArtifact", "value": " ".join(sys.argv[1:]).upper()}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", {"type": "FinishStructureRunEvent", "timestamp": time.time(), "payload": {"output_task_output": out}}) == 202
`;

async function allEvents(key: string, runId: string): Promise<any[]> {
  const res = await as(key).get(`/api/assistant-runs/${runId}/events?limit=1000`);
  expect(res.status, res.text).to.equal(200);
  return res.body.events;
}

describe('assistants', function () {
  this.timeout(120_000);

  it('CRUD: create, read, list, update (lists replace), delete; every id must exist in the organization', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const rule = await api.post('/api/rules', { name: 'r', rule: 'Answer in French.' });
    const ruleset = await api.post('/api/rulesets', { name: 'French', rule_ids: [rule.body.rule_id] });
    expect(ruleset.status, ruleset.text).to.equal(201);

    const created = await api.post('/api/assistants', {
      name: 'Helper',
      description: 'helps',
      input: 'Hi',
      ruleset_ids: [ruleset.body.ruleset_id],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({
      name: 'Helper',
      description: 'helps',
      input: 'Hi',
      organization_id: t.organizationId,
    });
    expect(created.body.ruleset_ids).to.deep.equal([ruleset.body.ruleset_id]);
    expect(created.body.tool_ids).to.deep.equal([]);
    const id = created.body.assistant_id;

    expect((await api.get(`/api/assistants/${id}`)).body.name).to.equal('Helper');
    const list = await api.get('/api/assistants');
    expect(list.body.assistants.map((a: any) => a.assistant_id)).to.deep.equal([id]);

    const updated = await api.patch(`/api/assistants/${id}`, { name: 'Helper 2', ruleset_ids: [] });
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body).to.include({ name: 'Helper 2', description: 'helps' });
    expect(updated.body.ruleset_ids).to.deep.equal([]);

    const missing = randomUUID();
    const bad = await api.post('/api/assistants', { name: 'x', tool_ids: [missing] });
    expect(bad.status).to.equal(409);
    expect(bad.body.errors[0]).to.deep.include({ path: '/body/tool_ids' });
    expect(bad.body.errors[0].message).to.contain(missing);
    const kb = await api.post('/api/assistants', { name: 'x', knowledge_base_ids: [missing] });
    expect(kb.status).to.equal(409);
    expect(kb.body.errors[0]).to.deep.equal({
      message: `Knowledge base not found: ${missing}`,
      path: '/body/knowledge_base_ids',
    });
    expect((await api.post('/api/assistants', { description: 'no name' })).status).to.equal(400);

    expect((await api.delete(`/api/assistants/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/assistants/${id}`)).status).to.equal(404);
  });

  it('runs with rulesets and a new thread: the prompt has the rules, the answer is the output, the exchange joins the thread', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    const rule = await api.post('/api/rules', { name: 'r', rule: 'Always answer in French.' });
    const ruleset = await api.post('/api/rulesets', { name: 'Language', rule_ids: [rule.body.rule_id] });
    const assistant = await api.post('/api/assistants', { name: 'Frenchie', ruleset_ids: [ruleset.body.ruleset_id] });
    provider.script(
      { model, text: 'Bonjour !', usage: { prompt_tokens: 20, completion_tokens: 3 } },
      { model, text: 'Je vais bien.', usage: { prompt_tokens: 30, completion_tokens: 4 } },
    );

    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'Hello',
      new_thread: true,
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ status: 'QUEUED', stream: false, input: 'Hello' });
    expect(created.body.ruleset_ids).to.deep.equal([ruleset.body.ruleset_id]);
    const threadId = created.body.thread_id;
    expect(threadId).to.be.a('string');

    const run = await waitForAssistantRun(t.key, created.body.assistant_run_id);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output).to.include({ type: 'TextArtifact', value: 'Bonjour !' });
    expect(run.usage).to.deep.equal({ input_tokens: 20, output_tokens: 3 });
    expect(run.model).to.equal(`local/${model}`);
    const first = await provider.waitForRequest(model);
    expect(first.body.messages[0].role).to.equal('system');
    expect(first.body.messages[0].content).to.contain('Always answer in French.');
    expect(first.body.messages.at(-1)).to.deep.include({ role: 'user', content: 'Hello' });

    // Stored as griptape's conversation memory stores an exchange: each side a TextArtifact's JSON.
    const messages = await api.get(`/api/threads/${threadId}/messages`);
    const sides = (m: any) => [JSON.parse(m.input), JSON.parse(m.output)].map((a) => `${a.type}: ${a.value}`);
    expect(messages.body.messages.map(sides)).to.deep.equal([['TextArtifact: Hello', 'TextArtifact: Bonjour !']]);

    // A second run on the thread (args after the input) sees the first exchange.
    const second = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'How are you?',
      args: ['Be brief.'],
      thread_id: threadId,
      new_thread: true,
      model: `local/${model}`,
    });
    expect(second.body.thread_id).to.equal(threadId);
    expect((await waitForAssistantRun(t.key, second.body.assistant_run_id)).status).to.equal('SUCCEEDED');
    const again = await provider.waitForRequest(model, 2);
    expect(again.body.messages.slice(1).map((m: any) => [m.role, m.content])).to.deep.equal([
      ['user', 'Hello'],
      ['assistant', 'Bonjour !'],
      ['user', 'How are you?\n\nBe brief.'],
    ]);
    const after = await api.get(`/api/threads/${threadId}/messages`);
    expect(after.body.messages.map((m: any) => JSON.parse(m.output).value)).to.deep.equal([
      'Bonjour !',
      'Je vais bien.',
    ]);

    const events = await allEvents(t.key, created.body.assistant_run_id);
    expect(events.map((e) => `${e.origin} ${e.type}`)).to.deep.equal([
      'SYSTEM StructureRunStarting',
      'SYSTEM StructureRunRunning',
      'ASSISTANT StartStructureRunEvent',
      'ASSISTANT FinishStructureRunEvent',
      'SYSTEM StructureRunCompleted',
    ]);
    expect(events[3].payload.output_task_output).to.include({ type: 'TextArtifact', value: 'Bonjour !' });
    expect(events[3]).to.have.property('assistant_run_id', created.body.assistant_run_id);

    const listed = await api.get(`/api/assistants/${assistant.body.assistant_id}/runs?status=SUCCEEDED`);
    expect(listed.body.assistant_runs).to.have.length(2);
  });

  it('streams: the SSE stream carries the TextChunkEvents in order and ends with the finish event', async () => {
    const { modelProvider: provider, baseUrl } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    const assistant = await api.post('/api/assistants', { name: 'Streamer' });
    const chunks = ['The ', 'quick ', 'brown ', 'fox ', 'jumps.'];
    provider.script({ model, chunks, chunkDelayMs: 20 });

    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'Tell me',
      stream: true,
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    const sse = await readSse(`${baseUrl}/api/assistant-runs/${created.body.assistant_run_id}/events/stream`, t.key);
    expect(sse.status).to.equal(200);
    expect(sse.ended).to.equal(true);
    expect(sse.end).to.equal('SUCCEEDED'); // the end comment, after every event
    expect(sse.afterEnd).to.equal(0);
    const assistantEvents = sse.frames.map((f) => f.data).filter((e) => e.origin === 'ASSISTANT');
    const tokens = assistantEvents.filter((e) => e.type === 'TextChunkEvent').map((e) => e.payload.token);
    expect(tokens).to.deep.equal(chunks);
    expect(assistantEvents[0].type).to.equal('StartStructureRunEvent');
    expect(assistantEvents.at(-1).type).to.equal('FinishStructureRunEvent');
    expect(assistantEvents.at(-1).payload.output_task_output.value).to.equal(chunks.join(''));
    expect(sse.frames.map((f) => f.id)).to.deep.equal(sse.frames.map((_, i) => i + 1));
    expect((await api.get(`/api/assistant-runs/${created.body.assistant_run_id}`)).body.status).to.equal('SUCCEEDED');
  });

  it("calls a tool: the model's function call runs the tool's activity and the result goes back to the model", async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    const tool = await structureWithBuild(t.organizationId, {
      kind: 'tool',
      files: { 'tool.py': CALCULATOR_TOOL },
      mainFile: 'tool.py',
      name: 'calc',
    });
    const assistant = await api.post('/api/assistants', { name: 'Mathy', tool_ids: [tool.structureId] });
    provider.script(
      { model, toolCalls: [{ id: 'call_1', name: 'Calculator_divide', arguments: '{"a": 10, "b": 4}' }] },
      { model, respond: (body) => ({ text: `The answer is ${body.messages.at(-1)!.content}` }) },
    );

    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'What is 10/4?',
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    const run = await waitForAssistantRun(t.key, created.body.assistant_run_id, undefined, 60_000);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output.value).to.equal('The answer is 2.5');

    const first = await provider.waitForRequest(model);
    const offered = first.body.tools.map((f: any) => f.function.name);
    expect(offered).to.deep.equal(['Calculator_divide']);
    expect(first.body.tools[0].function.description).to.equal('Divides a by b.');
    const second = await provider.waitForRequest(model, 2);
    expect(second.body.messages.at(-2)!.tool_calls[0]).to.deep.include({ id: 'call_1' });
    expect(second.body.messages.at(-1)).to.deep.include({ role: 'tool', tool_call_id: 'call_1', content: '2.5' });

    const events = await allEvents(t.key, created.body.assistant_run_id);
    const started = events.find((e) => e.type === 'AssistantToolCallStarted');
    expect(started.payload).to.include({
      tool_call_id: 'call_1',
      name: 'Calculator_divide',
      tool_id: tool.structureId,
    });
    const toolRun = await api.get(`/api/tool-runs/${started.payload.run_id}`);
    expect(toolRun.body).to.deep.include({
      status: 'SUCCEEDED',
      input: { activity: 'divide', params: { a: 10, b: 4 } },
    });
    expect(events.find((e) => e.type === 'AssistantToolCallCompleted').payload).to.include({
      tool_call_id: 'call_1',
      status: 'SUCCEEDED',
    });
  });

  it("calls a structure: the run gets the model's args and its output goes back to the model", async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    const structure = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': SHOUT_STRUCTURE },
      name: 'Shout it',
    });
    const assistant = await api.post('/api/assistants', { name: 'Loud' });
    provider.script(
      { model, toolCalls: [{ id: 'call_s', name: 'structure_Shout_it', arguments: '{"args": ["hello", "world"]}' }] },
      { model, respond: (body) => ({ text: `It said ${body.messages.at(-1)!.content}` }) },
    );
    // The structure comes from `additional_structure_ids`, on top of the assistant's (none).
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'Shout hello world',
      additional_structure_ids: [structure.structureId],
      model: `local/${model}`,
    });
    expect(created.body.structure_ids).to.deep.equal([structure.structureId]);
    const run = await waitForAssistantRun(t.key, created.body.assistant_run_id, undefined, 60_000);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.output.value).to.equal('It said HELLO WORLD');
    const first = await provider.waitForRequest(model);
    expect(first.body.tools[0].function).to.deep.include({ name: 'structure_Shout_it' });
    const events = await allEvents(t.key, created.body.assistant_run_id);
    const started = events.find((e) => e.type === 'AssistantToolCallStarted');
    const structureRun = await api.get(`/api/structure-runs/${started.payload.run_id}`);
    expect(structureRun.body).to.deep.include({
      status: 'SUCCEEDED',
      args: ['hello', 'world'],
      structure_id: structure.structureId,
    });
  });

  it('cancel stops the provider stream at once and ends the run CANCELLED', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    const assistant = await api.post('/api/assistants', { name: 'Talker' });
    provider.script({ model, text: 'one two three four five six seven', stallAfterChunks: 3 });

    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'Talk',
      stream: true,
      model: `local/${model}`,
    });
    const req = await provider.waitForRequest(model);
    await req.stalled;
    const cancelled = await api.post(`/api/assistant-runs/${created.body.assistant_run_id}/cancel`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('CANCELLED');
    expect(cancelled.body.status_detail).to.include({ reason: 'Cancelled', requested_by: t.userId });
    expect(await req.ended).to.equal('disconnected');
    expect((await api.post(`/api/assistant-runs/${created.body.assistant_run_id}/cancel`)).body.status).to.equal(
      'CANCELLED',
    );
    const events = await allEvents(t.key, created.body.assistant_run_id);
    expect(events.filter((e) => e.type === 'FinishStructureRunEvent')).to.have.length(0);
    expect(events.at(-1).type).to.equal('StructureRunCancelled');
  });

  it('provider failures end runs with clear reasons: a rejected request FAILED, an unreachable provider ERROR', async () => {
    const { modelProvider: provider, config } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const assistant = await api.post('/api/assistants', { name: 'Fragile', input: 'Hi' });
    const start = async (model: string) =>
      (await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, { model: `local/${model}` })).body
        .assistant_run_id;

    const rejected = provider.uniqueModel();
    provider.script({ model: rejected, error: { status: 400, message: 'max_tokens is too large for this model' } });
    const failed = await waitForAssistantRun(t.key, await start(rejected));
    expect(failed.status).to.equal('FAILED');
    expect(failed.status_detail).to.include({ reason: 'ModelRequestRejected' });
    expect(failed.status_detail.error).to.contain('max_tokens is too large for this model');

    const down = provider.uniqueModel();
    provider.script({
      model: down,
      error: { status: 503, message: 'overloaded' },
      times: config.models.maxRetries + 1,
    });
    const errored = await waitForAssistantRun(t.key, await start(down));
    expect(errored.status).to.equal('ERROR');
    expect(errored.status_detail).to.include({ reason: 'ModelUnreachable' });
    expect(errored.status_detail.error).to.contain('overloaded');
    expect(provider.requestsFor(down)).to.have.length(config.models.maxRetries + 1);

    const empty = await as(t.key).post(
      `/api/assistants/${(await api.post('/api/assistants', { name: 'Mute' })).body.assistant_id}/runs`,
      {},
    );
    expect(empty.status).to.equal(409);
  });
});

// Run control of assistant runs through the public api (docs/run-control.md): an assistant's `concurrency` and
// `retry_policy` on its record; with `limit: 1` a second run of a key waits QUEUED (saying why) and starts only
// after the first run ended, another key's run does not wait; `skip` never asks the model; the queue
// endpoint counts per key, a paused queue starts nothing until resumed; a run whose attempt the policy retries
// runs again as the same run, each attempt on its record, with a RunRetrying event. With ORG_MAX_CONCURRENT_RUNS=1
// an assistant run holds the organization's slot (a second one waits for it) and the structure it calls runs in
// that slot instead of waiting for it forever.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { TERMINAL } from '../harness/runs';
import { configWith, getStack, newTenant, startApi, startWorker } from '../harness/stack';

type Api = ReturnType<typeof as>;

async function waitForAssistantRun(
  api: Api,
  id: string,
  done: (r: any) => boolean = (r) => TERMINAL.includes(r.status),
) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await api.get(`/api/assistant-runs/${id}`);
    expect(res.status, res.text).to.equal(200);
    if (done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`assistant run ${id}: still ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('run control of assistant runs', function () {
  this.timeout(120_000);

  async function assistant(fields: Record<string, unknown>) {
    const t = await newTenant('assistant-control');
    const api = as(t.key);
    const created = await api.post('/api/assistants', { name: 'Controlled', ...fields });
    expect(created.status, created.text).to.equal(201);
    const model = getStack().modelProvider.uniqueModel();
    const run = async (body: Record<string, unknown> = {}) => {
      const res = await api.post(`/api/assistants/${created.body.assistant_id}/runs`, {
        input: 'Hi',
        stream: true,
        model: `local/${model}`,
        ...body,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body.assistant_run_id as string;
    };
    return { api, assistant: created.body, model, run };
  }

  it('concurrency: one run per key at a time, another key unaffected; the queue counts per key', async () => {
    const provider = getStack().modelProvider;
    const a = await assistant({ concurrency: { limit: 1 } });
    expect(a.assistant.concurrency).to.deep.equal({ limit: 1, strategy: 'queue' });
    // Each answer takes about 2 s (8 chunks, 250 ms apart).
    provider.script({ model: a.model, text: 'one two three four five six', chunkDelayMs: 250, times: 3 });
    const first = await a.run({ concurrency_key: 'customer-1' });
    await provider.waitForRequest(a.model);
    const second = await a.run({ concurrency_key: 'customer-1' });
    const other = await a.run({ concurrency_key: 'customer-2' });
    const waiting = await waitForAssistantRun(
      a.api,
      second,
      (r) => r.status_detail?.waiting_for === 'key' || TERMINAL.includes(r.status),
    );
    expect(waiting.status).to.equal('QUEUED');
    expect(waiting.concurrency_key).to.equal('customer-1');
    expect(waiting.status_detail.message).to.include('concurrency key "customer-1" of its assistant');
    const queue = await a.api.get(`/api/assistants/${a.assistant.assistant_id}/queue`);
    expect(queue.status, queue.text).to.equal(200);
    expect(queue.body.keys.find((k: { key: string }) => k.key === 'customer-1')).to.deep.equal({
      key: 'customer-1',
      running: 1,
      queued: 1,
      limit: 1,
    });
    const ends = [];
    for (const id of [first, second, other]) ends.push(await waitForAssistantRun(a.api, id));
    expect(ends.map((r) => r.status)).to.deep.equal(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(Date.parse(ends[1].started_at)).to.be.at.least(Date.parse(ends[0].completed_at));
    expect(Date.parse(ends[2].started_at), 'customer-2 did not wait for customer-1').to.be.below(
      Date.parse(ends[0].completed_at),
    );
    // Each run asked the model once, and was answered in full.
    const requests = provider.requestsFor(a.model);
    expect(requests).to.have.length(3);
    expect(requests.filter((r) => r.outcome === 'completed')).to.have.length(3);
  });

  it('pause and resume: a paused queue starts nothing; resuming starts what waits', async () => {
    const provider = getStack().modelProvider;
    const a = await assistant({});
    expect(a.assistant.concurrency).to.equal(null);
    const paused = await a.api.post(`/api/assistants/${a.assistant.assistant_id}/queue/pause`);
    expect(paused.status, paused.text).to.equal(200);
    expect(paused.body.paused).to.equal(true);
    provider.script({ model: a.model, text: 'resumed' });
    const id = await a.run();
    const held = await waitForAssistantRun(a.api, id, (r) => r.status_detail?.waiting_for === 'paused');
    expect(held.status).to.equal('QUEUED');
    expect(provider.requestsFor(a.model)).to.have.length(0);
    const resumed = await a.api.post(`/api/assistants/${a.assistant.assistant_id}/queue/resume`);
    expect(resumed.body).to.deep.include({ paused: false, paused_at: null });
    expect((await waitForAssistantRun(a.api, id)).status).to.equal('SUCCEEDED');
  });

  it('skip: a run of a key at its limit ends CANCELLED at once, never asking the model', async () => {
    const provider = getStack().modelProvider;
    const a = await assistant({ concurrency: { limit: 1, strategy: 'skip' } });
    provider.script({ model: a.model, text: 'a b c d e f g h', chunkDelayMs: 250 });
    const first = await a.run();
    await provider.waitForRequest(a.model);
    const skipped = await waitForAssistantRun(a.api, await a.run());
    expect(skipped.status).to.equal('CANCELLED');
    expect(skipped.started_at).to.equal(null);
    expect(skipped.status_detail.message).to.include('strategy skip');
    expect((await waitForAssistantRun(a.api, first)).status).to.equal('SUCCEEDED');
    expect(provider.requestsFor(a.model)).to.have.length(1);
  });

  it('retries: an attempt its policy retries runs again as the same run, each attempt recorded', async () => {
    const provider = getStack().modelProvider;
    const policy = { max_attempts: 3, initial_interval: 0.2, backoff: 2, max_interval: 1, on: ['Failed'] };
    const a = await assistant({ retry_policy: { max_attempts: 2, on: ['Failed'] } });
    expect(a.assistant.retry_policy).to.deep.equal({
      max_attempts: 2,
      initial_interval: 1,
      backoff: 2,
      max_interval: 60,
      on: ['Failed'],
    });
    const refused = await a.api.post(`/api/assistants/${a.assistant.assistant_id}/runs`, {
      input: 'x',
      retry_policy: { max_attempts: 11 },
    });
    expect(refused.status).to.equal(400);
    provider.script({ model: a.model, error: { status: 400, message: 'not today' } }, { model: a.model, text: 'ok' });
    const id = await a.run({ retry_policy: policy });
    const run = await waitForAssistantRun(a.api, id);
    expect(run.status, JSON.stringify(run)).to.equal('SUCCEEDED');
    expect(run.attempt).to.equal(2);
    expect(run.retry_policy).to.deep.equal(policy);
    expect(run.attempts.map((x: { attempt: number; status: string }) => [x.attempt, x.status])).to.deep.equal([
      [1, 'FAILED'],
      [2, 'SUCCEEDED'],
    ]);
    expect(run.attempts[0].reason).to.equal('ModelRequestRejected');
    expect(run.output.value).to.equal('ok');
    const events = await a.api.get(`/api/assistant-runs/${id}/events?limit=200`);
    const retrying = events.body.events.filter((e: { type: string }) => e.type === 'RunRetrying');
    expect(retrying).to.have.length(1);
    expect(retrying[0].payload).to.deep.include({ attempt: 2, reason: 'Failed', retry_in_seconds: 0.2 });
    // Without a policy of its own or its assistant's, a run has one attempt and no `attempts`.
    const plain = await assistant({});
    provider.script({ model: plain.model, error: { status: 400, message: 'no' } });
    const once = await waitForAssistantRun(plain.api, await plain.run());
    expect(once).to.deep.include({ status: 'FAILED', attempt: 1 });
    expect(once).to.not.have.property('attempts');
  });

  it('ORG_MAX_CONCURRENT_RUNS counts assistant runs; a structure an assistant run calls runs in its slot', async () => {
    const config = configWith({
      ORG_MAX_CONCURRENT_RUNS: '1',
      TEMPORAL_TASK_QUEUE: `assistant-slots-${randomUUID().slice(0, 8)}`,
    });
    const worker = await startWorker(config);
    const server = await startApi(getStack().env.client, 0, config);
    try {
      const provider = getStack().modelProvider;
      const t = await newTenant('assistant-slots');
      const api = as(t.key, server.baseUrl);
      const structure = await structureWithBuild(t.organizationId, {
        files: { 'structure.py': 'print("called")\n' },
        name: 'Echo',
      });
      const assistant = await api.post('/api/assistants', { name: 'Caller', structure_ids: [structure.structureId] });
      const model = provider.uniqueModel();
      provider.script(
        { model, toolCalls: [{ id: 'call_1', name: 'structure_Echo', arguments: '{"args": []}' }] },
        { model, text: 'called it' },
        { model, text: 'second' },
      );
      const create = async () => {
        const res = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
          input: 'Call it',
          model: `local/${model}`,
        });
        expect(res.status, res.text).to.equal(201);
        return res.body.assistant_run_id as string;
      };
      const first = await create();
      await provider.waitForRequest(model);
      const second = await create();
      const waiting = await waitForAssistantRun(
        api,
        second,
        (r) => r.status_detail?.waiting_for === 'organization' || TERMINAL.includes(r.status),
      );
      expect(waiting.status, 'the second run waits for the one slot of its organization').to.equal('QUEUED');
      expect(waiting.status_detail.message).to.include('ORG_MAX_CONCURRENT_RUNS=1');
      const ended = await waitForAssistantRun(api, first);
      expect(ended.status, JSON.stringify(ended.status_detail)).to.equal('SUCCEEDED');
      expect(ended.output.value).to.equal('called it');
      const [child] = await getStack().ds.query(
        `SELECT status FROM runs WHERE resource_id = $1 AND kind = 'structure'`,
        [structure.structureId],
      );
      expect(child.status).to.equal('SUCCEEDED');
      expect((await waitForAssistantRun(api, second)).status).to.equal('SUCCEEDED');
    } finally {
      await server.close();
      await worker.close();
    }
  });
});

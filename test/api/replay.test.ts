// Replay (docs/run-control.md#replay): a finished run runs again as a new run that names it; one run or the
// finished runs of a resource a filter selects; structure and function runs (the code kinds share the routes)
// and assistant runs (answered by the stack's local model provider).
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { PY_PRELUDE, SLEEP_PROGRAM, TERMINAL, waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

/** Prints its args and FROM_RUN, posts `hello <args>` as its output, exits with its first arg when it is a number. */
const PROGRAM = `${PY_PRELUDE}
print("args " + json.dumps(sys.argv[1:]) + " from_run " + str(os.environ.get("FROM_RUN")))
finish = {"type": "FinishStructureRunEvent", "timestamp": time.time(),
          "payload": {"output_task_output": {"type": "TextArtifact", "value": "hello " + " ".join(sys.argv[1:])}}}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", [finish]) == 202
sys.exit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1].isdigit() else 0)
`;

describe('replay', function () {
  this.timeout(120_000);

  it('runs a finished structure run again as a new run with its args and env vars, or overrides', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PROGRAM } });
    const created = await api.post(`/api/structures/${s.structureId}/runs`, {
      args: ['x', 'y'],
      env_vars: [{ name: 'FROM_RUN', value: 'first' }],
      concurrency_key: 'customer-1',
    });
    const original = await waitForRun(t.key, created.body.structure_run_id);
    expect(original.status).to.equal('SUCCEEDED');

    const replay = await api.post(`/api/structure-runs/${original.structure_run_id}/replay`, {});
    expect(replay.status, replay.text).to.equal(201);
    expect(replay.body).to.include({
      structure_id: s.structureId,
      deployment_id: s.deploymentId,
      status: 'QUEUED',
      replayed_from_run_id: original.structure_run_id,
    });
    expect(replay.body.structure_run_id).to.not.equal(original.structure_run_id);
    expect(replay.body.args).to.deep.equal(['x', 'y']);
    expect(replay.body.env_vars).to.deep.equal(original.env_vars);
    expect(replay.body.concurrency_key, 'under the same key as the original').to.equal('customer-1');
    const again = await waitForRun(t.key, replay.body.structure_run_id);
    expect(again.status).to.equal('SUCCEEDED');
    expect(again.output).to.deep.equal(original.output);
    expect((await api.get(`/api/structure-runs/${again.structure_run_id}/logs`)).body.logs).to.deep.equal([
      'args ["x", "y"] from_run first',
    ]);
    // The original is untouched and names no replay.
    const before = await api.get(`/api/structure-runs/${original.structure_run_id}`);
    expect(before.body).to.deep.equal(original);
    expect(before.body).to.not.have.property('replayed_from_run_id');

    // Overrides: args and env vars, and a pinned deployment.
    const changed = await api.post(`/api/structure-runs/${original.structure_run_id}/replay`, {
      args: ['z'],
      env_vars: [{ name: 'FROM_RUN', value: 'second' }],
      deployment_id: s.deploymentId,
    });
    expect(changed.status, changed.text).to.equal(201);
    const ended = await waitForRun(t.key, changed.body.structure_run_id);
    expect(ended.output.value).to.equal('hello z');
    expect((await api.get(`/api/structure-runs/${ended.structure_run_id}/logs`)).body.logs).to.deep.equal([
      'args ["z"] from_run second',
    ]);
    // A replay can itself be replayed; it names its own original.
    const chained = await api.post(`/api/structure-runs/${ended.structure_run_id}/replay`, {});
    expect(chained.body.replayed_from_run_id).to.equal(ended.structure_run_id);
    await waitForRun(t.key, chained.body.structure_run_id);

    // A deployment that is not one of this structure's: 404 naming it.
    const otherDeployment = (await structureWithBuild(t.organizationId, { files: { 'structure.py': PROGRAM } }))
      .deploymentId;
    const foreign = await api.post(`/api/structure-runs/${original.structure_run_id}/replay`, {
      deployment_id: otherDeployment,
    });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.errors[0].message).to.include(otherDeployment);
  });

  it('refuses a run that has not finished (409), an unknown one (404), and another organization’s (404)', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const running = (await api.post(`/api/structures/${s.structureId}/runs`, { args: ['600'] })).body;
    await waitForRun(t.key, running.structure_run_id, (r) => r.status === 'RUNNING');
    const refused = await api.post(`/api/structure-runs/${running.structure_run_id}/replay`, {});
    expect(refused.status).to.equal(409);
    expect(refused.body.errors[0].message).to.match(/is RUNNING: only a finished run/);
    const other = await newTenant();
    expect((await as(other.key).post(`/api/structure-runs/${running.structure_run_id}/replay`, {})).status).to.equal(
      404,
    );
    await api.post(`/api/structure-runs/${running.structure_run_id}/cancel`);
    const cancelled = await waitForRun(t.key, running.structure_run_id);
    expect(cancelled.status).to.equal('CANCELLED');
    // Once cancelled it can be replayed.
    const replay = await api.post(`/api/structure-runs/${running.structure_run_id}/replay`, { args: ['0'] });
    expect(replay.status, replay.text).to.equal(201);
    await api.post(`/api/structure-runs/${replay.body.structure_run_id}/cancel`);
    expect((await api.post('/api/structure-runs/00000000-0000-4000-8000-000000000000/replay', {})).status).to.equal(
      404,
    );
  });

  it('replays the finished runs of a structure that a filter selects: FAILED and ERROR by default, oldest first, bounded, each with its concurrency key', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PROGRAM } });
    const ids: string[] = [];
    for (const code of ['0', '3', '4']) {
      // The run that fails with 3 has a concurrency key; its replay keeps it.
      const key = code === '3' ? { concurrency_key: 'customer-3' } : {};
      ids.push(
        (await api.post(`/api/structures/${s.structureId}/runs`, { args: [code], ...key })).body.structure_run_id,
      );
      await waitForRun(t.key, ids.at(-1)!);
    }
    const bulk = await api.post(`/api/structures/${s.structureId}/runs/replay`, {});
    expect(bulk.status, bulk.text).to.equal(201);
    expect(bulk.body.structure_runs.map((r: any) => r.replayed_from_run_id)).to.deep.equal([ids[1], ids[2]]);
    expect(bulk.body.structure_runs.map((r: any) => r.args)).to.deep.equal([['3'], ['4']]);
    expect(bulk.body.structure_runs.map((r: any) => r.concurrency_key)).to.deep.equal(['customer-3', undefined]);
    for (const r of bulk.body.structure_runs)
      expect((await waitForRun(t.key, r.structure_run_id)).status).to.equal('FAILED');

    const succeeded = await api.post(`/api/structures/${s.structureId}/runs/replay`, {
      status: ['SUCCEEDED'],
      created_before: new Date().toISOString(),
      limit: 1,
    });
    expect(succeeded.body.structure_runs.map((r: any) => r.replayed_from_run_id)).to.deep.equal([ids[0]]);
    const none = await api.post(`/api/structures/${s.structureId}/runs/replay`, {
      created_after: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(none.body.structure_runs).to.deep.equal([]);
    // An empty window selects nothing.
    const at = new Date().toISOString();
    const empty = await api.post(`/api/structures/${s.structureId}/runs/replay`, {
      created_after: at,
      created_before: at,
    });
    expect([empty.status, empty.body.structure_runs]).to.deep.equal([201, []]);
    for (const r of succeeded.body.structure_runs) await waitForRun(t.key, r.structure_run_id);

    const unfinished = await api.post(`/api/structures/${s.structureId}/runs/replay`, { status: ['RUNNING'] });
    expect(unfinished.status).to.equal(400);
    const tooMany = await api.post(`/api/structures/${s.structureId}/runs/replay`, { limit: 101 });
    expect(tooMany.status).to.equal(400);
  });

  it('replays a function run with its input', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const f = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'function.py': 'def handler(event):\n    return {"echo": event["body"]}\n' },
      mainFile: 'function.py',
    });
    const executed = await api.post(`/api/functions/${f.structureId}/execute`, { n: 7 });
    expect(executed.status, executed.text).to.equal(200);
    const runs = (await api.get(`/api/functions/${f.structureId}/runs`)).body.function_runs;
    const replay = await api.post(`/api/function-runs/${runs[0].function_run_id}/replay`, {});
    expect(replay.status, replay.text).to.equal(201);
    expect(replay.body.input).to.deep.equal(runs[0].input);
    expect(replay.body.replayed_from_run_id).to.equal(runs[0].function_run_id);
    let run = replay.body;
    for (let i = 0; i < 600 && !TERMINAL.includes(run.status); i++) {
      await new Promise((r) => setTimeout(r, 50));
      run = (await api.get(`/api/function-runs/${run.function_run_id}`)).body;
    }
    expect(run.status).to.equal('SUCCEEDED');
    expect(run.output).to.deep.equal({ echo: { n: 7 } });
  });

  it('replays an assistant run with its input and model, or overrides', async () => {
    const { modelProvider: provider } = getStack();
    const model = provider.uniqueModel();
    // Answers every request for this model with the last user message, upper case.
    provider.script({
      model,
      times: Infinity,
      respond: (body) => ({ text: String(body.messages.at(-1)?.content).toUpperCase() }),
    });
    const t = await newTenant();
    const api = as(t.key);
    const assistant = (await api.post('/api/assistants', { name: 'Echo' })).body;
    const created = await api.post(`/api/assistants/${assistant.assistant_id}/runs`, {
      input: 'Say hello',
      model: `local/${model}`,
      concurrency_key: 'customer-2',
    });
    const wait = async (id: string) => {
      for (let i = 0; i < 600; i++) {
        const r = (await api.get(`/api/assistant-runs/${id}`)).body;
        if (TERMINAL.includes(r.status)) return r;
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error(`assistant run ${id} did not end`);
    };
    const original = await wait(created.body.assistant_run_id);
    expect(original.status, JSON.stringify(original.status_detail)).to.equal('SUCCEEDED');
    const replay = await api.post(`/api/assistant-runs/${original.assistant_run_id}/replay`, {});
    expect(replay.status, replay.text).to.equal(201);
    expect(replay.body).to.include({
      assistant_id: assistant.assistant_id,
      input: 'Say hello',
      replayed_from_run_id: original.assistant_run_id,
      status: 'QUEUED',
      concurrency_key: 'customer-2',
    });
    const again = await wait(replay.body.assistant_run_id);
    expect(again.status).to.equal('SUCCEEDED');
    expect(again.output.value).to.equal(original.output.value).and.to.equal('SAY HELLO');
    expect(again.model).to.equal(original.model);
    const changed = await api.post(`/api/assistant-runs/${original.assistant_run_id}/replay`, { input: 'Other' });
    expect(changed.body.input).to.equal('Other');
    expect((await wait(changed.body.assistant_run_id)).output.value).to.equal('OTHER');
    expect(provider.requestsFor(model)).to.have.length(3);
  });
});

// Function runs through HTTP on the real stack: execute (the handler's result as the answer), failures as
// 502 with the run's logs holding the traceback, and the runs' list, record and logs.
import { expect } from 'chai';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../fixtures/projects';
import { structureWithBuild, structureWithoutBuild } from '../support/builds';
import { as } from '../support/client';
import { configWith, getStack, newTenant, startApi } from '../support/stack';

const RAISES_PY = `
def handler(event):
    print("about to divide")
    return 1 / 0
`;

const ASYNC_MJS = `
export async function greet(event) {
  await new Promise((r) => setTimeout(r, 10));
  console.log('greeting', event.query_params.name);
  return { hello: event.query_params.name ?? 'nobody', body: event.body };
}
`;

describe('function runs', function () {
  this.timeout(120_000);

  it('executes the default python function with a JSON body and query params; the run records input, output and timings', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const fn = await api.post('/api/functions', { name: 'default' });
    expect(fn.status, fn.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, fn.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    const id = fn.body.function_id;

    // Repeated keys: the last value wins.
    const res = await api.post(`/api/functions/${id}/execute?x=1&y=2&x=3`, { numbers: [1, 2], nested: { ok: true } });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({
      message: 'Hello from the default function',
      input: { body: { numbers: [1, 2], nested: { ok: true } }, query_params: { x: '3', y: '2' } },
    });

    const got = await api.get(`/api/functions/${id}/execute?x=1`);
    expect(got.status, got.text).to.equal(200);
    expect(got.body.input).to.deep.equal({ body: null, query_params: { x: '1' } });

    const list = await api.get(`/api/functions/${id}/runs?status=SUCCEEDED`);
    expect(list.status, list.text).to.equal(200);
    expect(list.body.function_runs).to.have.length(2);
    expect(list.body.pagination).to.include({ total_count: 2 });
    const [newest, first] = list.body.function_runs;
    expect(newest.input).to.deep.equal({ body: null, query_params: { x: '1' } });
    expect(first).to.include({ function_id: id, deployment_id: deployment.deployment_id, status: 'SUCCEEDED' });
    expect(first.runtime_path).to.match(/\/function\.py$/);
    expect(first.output).to.deep.equal(res.body);
    expect(first.output_timestamp).to.be.a('number');
    expect(first.status_detail).to.deep.equal({ reason: 'Completed', message: null, exit_code: 0 });
    expect(Date.parse(first.started_at)).to.be.at.most(Date.parse(first.completed_at));

    const one = await api.get(`/api/function-runs/${first.function_run_id}`);
    expect(one.status, one.text).to.equal(200);
    expect(one.body).to.deep.equal(first);
    expect((await api.get(`/api/functions/${id}/runs?status=FAILED`)).body.function_runs).to.have.length(0);
  });

  it('a handler that raises: 502 FunctionExecutionError naming the run, which is FAILED with the traceback in its logs', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': RAISES_PY },
      mainFile: 'main.py',
    });
    const res = await api.post(`/api/functions/${fn.structureId}/execute`, {});
    expect(res.status, res.text).to.equal(502);
    expect(res.body.type).to.equal('FunctionExecutionError');
    const runId = /Function run ([0-9a-f-]{36})/.exec(res.body.errors[0].message)![1];
    expect(res.body.errors[0].message).to.include('ZeroDivisionError: division by zero');

    const run = (await api.get(`/api/function-runs/${runId}`)).body;
    expect(run).to.include({ status: 'FAILED', function_id: fn.structureId });
    expect(run.status_detail).to.deep.equal({
      reason: 'Completed',
      message: 'ZeroDivisionError: division by zero',
      exit_code: 1,
    });
    expect(run).to.not.have.property('output');
    const logs: string[] = (await api.get(`/api/function-runs/${runId}/logs`)).body.logs;
    expect(logs[0]).to.equal('about to divide');
    expect(logs).to.include('Traceback (most recent call last):');
    expect(logs[logs.length - 1]).to.equal('ZeroDivisionError: division by zero');
  });

  it('a handler that cannot be loaded: 502 with a LoadError', async () => {
    const t = await newTenant();
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': 'def other(event):\n    return 1\n' },
      mainFile: 'main.py',
    });
    const res = await as(t.key).post(`/api/functions/${fn.structureId}/execute`, {});
    expect(res.status, res.text).to.equal(502);
    expect(res.body.errors[0].message).to.include("LoadError: main.py defines no function named 'handler'");
  });

  it('loads the main file as a module registered in sys.modules (classes whose module inspect or attrs look up)', async () => {
    const t = await newTenant();
    const source =
      'import inspect, os\n\nclass Greeter:\n    pass\n\n' +
      'def handler(event):\n    return {"module": Greeter.__module__, "file": os.path.basename(inspect.getfile(Greeter))}\n';
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'greeter.py': source },
      mainFile: 'greeter.py',
    });
    const res = await as(t.key).post(`/api/functions/${fn.structureId}/execute`, {});
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ module: 'greeter', file: 'greeter.py' });
  });

  it('a result past RUN_RESULT_LIMIT_BYTES ends the run ERROR ResultTooLarge (python and nodejs); nothing is written to disk', async () => {
    const t = await newTenant();
    const limit = getStack().config.runLimits.resultBytes;
    const python = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': `def handler(event):\n    return "x" * ${limit * 3}\n` },
      mainFile: 'main.py',
    });
    const nodejs = await structureWithBuild(t.organizationId, {
      kind: 'function',
      runtime: 'nodejs',
      files: { 'index.mjs': `export const handler = () => 'y'.repeat(${limit * 3});\n` },
      mainFile: 'index.mjs',
    });
    for (const fn of [python, nodejs]) {
      const res = await as(t.key).post(`/api/functions/${fn.structureId}/execute`, {});
      expect(res.status, res.text).to.equal(502);
      expect(res.body.errors[0].message).to.include(`larger than the limit of ${limit} bytes (RUN_RESULT_LIMIT_BYTES)`);
      const [run] = (await as(t.key).get(`/api/functions/${fn.structureId}/runs`)).body.function_runs;
      expect(run.status).to.equal('ERROR');
      expect(run.status_detail.reason).to.equal('ResultTooLarge');
    }
    // Just under the limit (JSON quotes included) still answers.
    const fits = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': `def handler(event):\n    return "z" * ${limit - 2}\n` },
      mainFile: 'main.py',
    });
    const res = await as(t.key).post(`/api/functions/${fits.structureId}/execute`, {});
    expect(res.status).to.equal(200);
    expect(res.body.length).to.equal(limit - 2);
  });

  it('runs an async nodejs handler named by the config', async () => {
    const t = await newTenant();
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      runtime: 'nodejs',
      files: { 'index.mjs': ASYNC_MJS },
      mainFile: 'index.mjs',
      handler: 'greet',
    });
    const res = await as(t.key).post(`/api/functions/${fn.structureId}/execute?name=ada`, [1, 'two']);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ hello: 'ada', body: [1, 'two'] });
    const [run] = (await as(t.key).get(`/api/functions/${fn.structureId}/runs`)).body.function_runs;
    expect((await as(t.key).get(`/api/function-runs/${run.function_run_id}/logs`)).body.logs).to.deep.equal([
      'greeting ada',
    ]);
  });

  it("deploys a nodejs function from a bucket archive; the config's run.handler names the exported function", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const archive = makeArchive(
      'tar.gz',
      entriesOf({
        'function_config.yaml': config('nodejs', '  main_file: index.js\n  handler: shout\n'),
        'package.json': JSON.stringify({ name: 'fn', version: '1.0.0', private: true }),
        // CommonJS: the shim finds the export through the module's default (module.exports).
        'index.js': 'exports.shout = async (event) => ({ shouted: String(event.body.text).toUpperCase() });\n',
      }),
    );
    const bucketId = await uploadToNewBucket(t.key, 'fn.tgz', archive);
    const fn = await api.post('/api/functions', {
      name: 'node fn',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'fn.tgz' } },
    });
    expect(fn.status, fn.text).to.equal(201);
    const deployment = await waitForDeployment(t.key, fn.body.latest_deployment_id);
    expect(deployment.status, JSON.stringify(deployment.status_detail)).to.equal('SUCCEEDED');
    const res = await api.post(`/api/functions/${fn.body.function_id}/execute`, { text: 'hi' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ shouted: 'HI' });
  });

  it('answers 202 with the run when it outlasts FUNCTION_EXECUTE_TIMEOUT_SECONDS; the run goes on and records its output', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'slow.py': 'import time\ndef handler(event):\n    time.sleep(2)\n    return "late"\n' },
      mainFile: 'slow.py',
    });
    // An api of its own waits 1 s; the stack's worker runs the function.
    const api1s = await startApi(getStack().env.client, 0, configWith({ FUNCTION_EXECUTE_TIMEOUT_SECONDS: '1' }));
    try {
      const res = await as(t.key, api1s.baseUrl).post(`/api/functions/${fn.structureId}/execute`, {});
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.include({ function_id: fn.structureId });
      expect(['QUEUED', 'STARTING', 'RUNNING']).to.include(res.body.status);
      let run = res.body;
      for (let i = 0; i < 100 && !['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.status); i++) {
        await new Promise((r) => setTimeout(r, 100));
        run = (await api.get(`/api/function-runs/${res.body.function_run_id}`)).body;
      }
      expect(run).to.include({ status: 'SUCCEEDED', output: 'late' });
    } finally {
      await api1s.close();
    }
  });

  it('409 without a successful deployment; 404 for unknown functions and runs', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const undeployed = await structureWithoutBuild(t.organizationId, 'function');
    const res = await api.post(`/api/functions/${undeployed}/execute`, {});
    expect(res.status, res.text).to.equal(409);
    expect(res.body.type).to.equal('ConflictError');
    expect((await api.post(`/api/functions/00000000-0000-4000-8000-000000000000/execute`, {})).status).to.equal(404);
    expect((await api.get(`/api/function-runs/00000000-0000-4000-8000-000000000000`)).status).to.equal(404);
  });
});

// Structure runs through HTTP on the real stack: a python3 program runs as the structure's main file.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { structureWithBuild, structureWithoutBuild } from '../harness/builds';
import { as, request } from '../harness/client';
import { ECHO_PROGRAM, runAlive, SLEEP_PROGRAM, waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

const lines = async (key: string, runId: string) =>
  (await as(key).get(`/api/structure-runs/${runId}/logs`)).body.logs as string[];
const eventsOf = async (key: string, runId: string) =>
  (await as(key).get(`/api/structure-runs/${runId}/events?limit=1000`)).body.events;

describe('structure runs', function () {
  this.timeout(60_000);

  it('runs the main file with args and env: ordered logs, SUCCEEDED, SYSTEM events, output posted with the run credential', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const secret = await api.post('/api/secrets', { name: 'token', value: 's3cr3t value' });
    const s = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': ECHO_PROGRAM },
      envVars: [
        { name: 'FROM_STRUCTURE', value: 'structure' },
        { name: 'FROM_SECRET', value: secret.body.secret_id, source: 'secret_ref' },
      ],
    });
    const earlier = await api.post(`/api/structures/${s.structureId}/runs`, { args: ['earlier'] });
    await waitForRun(t.key, earlier.body.structure_run_id);

    const started = Date.now();
    const created = await api.post(`/api/structures/${s.structureId}/runs`, {
      args: ['two words', '--flag', '$HOME;rm -rf /'],
      env_vars: [
        { name: 'FROM_RUN', value: 'run', source: 'manual' },
        { name: 'FROM_STRUCTURE', value: 'overridden by the run' },
        { name: 'OTHER_RUN', value: earlier.body.structure_run_id },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({
      structure_id: s.structureId,
      deployment_id: s.deploymentId,
      status: 'QUEUED',
      started_at: null,
      completed_at: null,
    });
    const runId = created.body.structure_run_id;
    const running = await waitForRun(t.key, runId, (r) => r.status !== 'QUEUED' && r.status !== 'STARTING');
    const toRunningMs = Date.now() - started;
    const run = await waitForRun(t.key, runId);
    console.log(
      `      create → ${running.status}: ${toRunningMs} ms; create → ${run.status}: ${Date.now() - started} ms`,
    );

    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    expect(run.status_detail).to.deep.equal({ reason: 'Completed', message: null, exit_code: 0 });
    expect(run.output).to.deep.equal({ type: 'TextArtifact', value: 'hello two words --flag $HOME;rm -rf /' });
    expect(run.output_timestamp).to.equal(1700000000.5);
    expect(Date.parse(run.started_at)).to.be.at.most(Date.parse(run.completed_at));

    const logs = await lines(t.key, runId);
    expect(logs[0]).to.equal('args ["two words", "--flag", "$HOME;rm -rf /"]');
    expect(logs.slice(1, 3)).to.deep.equal(['to stderr', 'back to stdout']);
    const env = JSON.parse(logs.find((l) => l.startsWith('env {'))!.slice(4));
    expect(env).to.include({ DATABASE_URL: null, SECRETS_KEY: null, TEMPORAL_ADDRESS: null, LANG: 'C.UTF-8' });
    expect(env).to.include({ FROM_STRUCTURE: 'overridden by the run', FROM_SECRET: 's3cr3t value', FROM_RUN: 'run' });
    expect(env.HOME).to.match(/tarmac-run-/);
    // The organization's default bucket, for griptape's file manager driver.
    expect(env.GT_CLOUD_BUCKET_ID).to.equal(
      (await api.get(`/api/organizations/${t.organizationId}`)).body.default_bucket_id,
    );
    const names: string[] = JSON.parse(logs.find((l) => l.startsWith('env names '))!.slice('env names '.length));
    expect(names).to.include.members(['GT_CLOUD_API_KEY', 'GT_CLOUD_BASE_URL', 'GT_CLOUD_STRUCTURE_RUN_ID', 'PATH']);
    expect(
      names.filter((n) => !['FROM_STRUCTURE', 'FROM_SECRET', 'FROM_RUN', 'OTHER_RUN'].includes(n)).sort(),
    ).to.deep.equal([
      'GT_CLOUD_API_KEY',
      'GT_CLOUD_BASE_URL',
      'GT_CLOUD_BUCKET_ID',
      'GT_CLOUD_STRUCTURE_RUN_ID',
      'HOME',
      'LANG',
      'PATH',
      'PYTHONUNBUFFERED',
      'TARMAC_RUN_ATTEMPT',
      'TMPDIR',
    ]);
    // The run's credential: its own run and events yes, anything else no.
    expect(logs).to.include.members(['posted 202', 'own run 200', 'secrets 403', 'structures 403', 'other run 403']);
    expect((await api.get(`/api/secrets/${secret.body.secret_id}`)).body.last_used).to.be.a('string');

    const events = await eventsOf(t.key, runId);
    expect(events.map((e: any) => `${e.origin} ${e.type}`)).to.deep.equal([
      'SYSTEM StructureRunStarting',
      'SYSTEM StructureRunRunning',
      'USER FinishStructureRunEvent',
      'SYSTEM StructureRunCompleted',
    ]);
    expect(events[0].payload).to.deep.equal({ status: 'STARTING' });
    expect(events[1].payload).to.deep.equal({ status: 'RUNNING', started_at: run.started_at });
    expect(events[3].payload).to.deep.equal({
      status: 'SUCCEEDED',
      started_at: run.started_at,
      completed_at: run.completed_at,
      status_detail: { reason: 'Completed', message: null, exit_code: 0 },
    });
    // The run credential is gone with the run.
    const keys = await getStack().ds.query(`SELECT count(*)::int AS n FROM api_keys WHERE run_id = $1`, [runId]);
    expect(keys[0].n).to.equal(0);
  });

  it('ends FAILED with the exit code when the program exits non-zero', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': 'import sys\nprint("bad input", file=sys.stderr)\nsys.exit(3)\n' },
    });
    const created = await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: [] });
    const run = await waitForRun(t.key, created.body.structure_run_id);
    expect(run.status).to.equal('FAILED');
    expect(run.status_detail).to.deep.equal({
      reason: 'Completed',
      message: 'The process exited with code 3',
      exit_code: 3,
    });
    expect(await lines(t.key, run.structure_run_id)).to.deep.equal(['bad input']);
    const last = (await eventsOf(t.key, run.structure_run_id)).pop();
    expect(last).to.include({ type: 'StructureRunCompleted', origin: 'SYSTEM' });
    expect(last.payload.status_detail.exit_code).to.equal(3);
  });

  it('runs a nodejs main file the same way', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, {
      runtime: 'nodejs',
      files: {
        'structure.mjs':
          'console.log(JSON.stringify(process.argv.slice(2)));\nconsole.error(Object.keys(process.env).sort().join(","));\n',
      },
    });
    const created = await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['a b', 'c'] });
    const run = await waitForRun(t.key, created.body.structure_run_id);
    expect(run.status, JSON.stringify(run.status_detail)).to.equal('SUCCEEDED');
    // One line on each stream, written at the same instant: their relative order is not defined.
    expect(await lines(t.key, run.structure_run_id)).to.have.members([
      '["a b","c"]',
      'GT_CLOUD_API_KEY,GT_CLOUD_BASE_URL,GT_CLOUD_BUCKET_ID,GT_CLOUD_STRUCTURE_RUN_ID,HOME,LANG,PATH,TARMAC_RUN_ATTEMPT,TMPDIR',
    ]);
  });

  it('ends ERROR with the reason when the build cannot run, and refuses runs that cannot start', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': 'print(1)\n' },
      envVars: [{ name: 'GONE', value: '7c8e6a52-1a7e-4c55-9d0e-5f1c8d9a2b31', source: 'secret_ref' }],
    });
    const created = await api.post(`/api/structures/${s.structureId}/runs`, { args: [] });
    expect(created.body.args).to.deep.equal([]);
    const run = await waitForRun(t.key, created.body.structure_run_id);
    expect(run.status).to.equal('ERROR');
    expect(run.status_detail.reason).to.equal('SecretNotFound');
    const last = (await eventsOf(t.key, run.structure_run_id)).pop();
    expect(last).to.deep.include({
      type: 'StructureRunError',
      payload: { status: 'ERROR', status_detail: { error: run.status_detail.error } },
    });

    const undeployed = await api.post(`/api/structures/${await structureWithoutBuild(t.organizationId)}/runs`, {
      args: [],
    });
    expect(undeployed.status, undeployed.text).to.equal(409);
    expect(undeployed.body.errors[0].message).to.match(/no successful deployment/);
    const badRef = await api.post(`/api/structures/${s.structureId}/runs`, {
      args: [],
      env_vars: [{ name: 'X', value: 'nope', source: 'secret_ref' }],
    });
    expect(badRef.status).to.equal(400);
    expect(badRef.body.errors[0].path).to.equal('/body/env_vars/0/value');
    const unknownRef = await api.post(`/api/structures/${s.structureId}/runs`, {
      args: [],
      env_vars: [{ name: 'X', value: randomUUID(), source: 'secret_ref' }],
    });
    expect(unknownRef.status).to.equal(409);
    expect(unknownRef.body.errors[0].path).to.equal('/body/env_vars/0/value');
    // Another organization's structure, deployed, is unknown here (the create's one statement reads it in the
    // caller's organization); an unknown structure is a 404 before its request's secret refs or retry policy are judged.
    const other = await newTenant();
    const theirs = await structureWithBuild(other.organizationId, { files: { 'structure.py': 'print(1)\n' } });
    expect((await api.post(`/api/structures/${theirs.structureId}/runs`, { args: [] })).status).to.equal(404);
    expect(
      (
        await api.post(`/api/structures/${randomUUID()}/runs`, {
          args: [],
          env_vars: [{ name: 'X', value: randomUUID(), source: 'secret_ref' }],
          retry_policy: { initial_interval: 10, max_interval: 1 },
        })
      ).status,
    ).to.equal(404);
    expect((await api.post(`/api/structures/${s.structureId}/runs`, { args: ['a\u0000b'] })).status).to.equal(400);
    expect(
      (
        await api.post(`/api/structures/${s.structureId}/runs`, {
          args: [],
          env_vars: [{ name: 'BAD-NAME', value: 'x' }],
        })
      ).status,
    ).to.equal(400);
    // `args` is required (it may be empty); unknown members are ignored.
    for (const body of [{}, { env_vars: [] }, undefined]) {
      const missing = await api.post(`/api/structures/${s.structureId}/runs`, body);
      expect(missing.status, JSON.stringify(body)).to.equal(400);
      expect(missing.body.type).to.equal('ValidationError');
      expect(missing.body.errors[0].path).to.equal(body ? '/body/args' : '/body');
    }
    expect((await api.post(`/api/structures/${s.structureId}/runs`, { args: [], extra: 1 })).status).to.equal(201);
    expect((await api.get('/api/structure-runs/5f1c8d9a-2b31-4c55-9d0e-7c8e6a521a7e')).status).to.equal(404);
  });

  it('lists runs newest first with status filters given as A,B or repeated', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': 'import sys\nsys.exit(int(sys.argv[1]))\n' },
    });
    const ids: string[] = [];
    for (const code of ['0', '1', '0']) {
      const r = await api.post(`/api/structures/${s.structureId}/runs`, { args: [code] });
      ids.push(r.body.structure_run_id);
      await waitForRun(t.key, r.body.structure_run_id);
    }
    const all = await api.get(`/api/structures/${s.structureId}/runs?page_size=2`);
    expect(all.body.structure_runs.map((r: any) => r.structure_run_id)).to.deep.equal([ids[2], ids[1]]);
    expect(all.body.pagination).to.include({ total_count: 3, total_pages: 2, next_page: 2 });
    const ok = await api.get(`/api/structures/${s.structureId}/runs?status=SUCCEEDED`);
    expect(ok.body.structure_runs.map((r: any) => r.structure_run_id)).to.deep.equal([ids[2], ids[0]]);
    const comma = await api.get(`/api/structures/${s.structureId}/runs?status=FAILED,RUNNING`);
    const repeated = await api.get(`/api/structures/${s.structureId}/runs?status=FAILED&status=RUNNING`);
    expect(comma.body.structure_runs.map((r: any) => r.structure_run_id)).to.deep.equal([ids[1]]);
    expect(repeated.body).to.deep.equal(comma.body);
    expect((await api.get(`/api/structures/${s.structureId}/runs?status=DONE`)).status).to.equal(400);
  });

  it('cancels a running program at once: 200 CANCELLED, its process is gone; cancel is idempotent, 409 once ended otherwise', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const created = await api.post(`/api/structures/${s.structureId}/runs`, { args: ['600'] });
    const runId = created.body.structure_run_id;
    let pid = 0;
    for (let i = 0; i < 200 && !pid; i++) {
      pid = Number((await lines(t.key, runId))[0]?.split(' ')[1] ?? 0);
      if (!pid) await new Promise((r) => setTimeout(r, 50));
    }
    expect(runAlive(runId)).to.equal(true);

    const asked = Date.now();
    const cancelled = await api.post(`/api/structure-runs/${runId}/cancel`);
    const cancelMs = Date.now() - asked;
    console.log(`      cancel answered in ${cancelMs} ms`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('CANCELLED');
    expect(cancelled.body.status_detail).to.deep.include({ reason: 'Cancelled', requested_by: t.userId });
    expect(cancelMs).to.be.lessThan(5_000);
    expect(runAlive(runId)).to.equal(false);
    const last = (await eventsOf(t.key, runId)).pop();
    expect(last).to.include({ type: 'StructureRunCancelled', origin: 'SYSTEM' });
    expect(last.payload.status).to.equal('CANCELLED');

    const again = await api.post(`/api/structure-runs/${runId}/cancel`);
    expect(again.status).to.equal(200);
    expect(again.body.completed_at).to.equal(cancelled.body.completed_at);

    const quick = await api.post(`/api/structures/${s.structureId}/runs`, { args: ['0'] });
    await waitForRun(t.key, quick.body.structure_run_id);
    const late = await api.post(`/api/structure-runs/${quick.body.structure_run_id}/cancel`);
    expect(late.status).to.equal(409);
    expect(late.body.errors[0].message).to.match(/already ended: SUCCEEDED/);
  });

  it('starts runs from the webhook: POST body as the first argument, ?api_key= accepted, refused when disabled', async () => {
    const t = await newTenant();
    const enabled = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': 'import sys, json\nprint(json.dumps(sys.argv[1:]))\n' },
      webhookEnabled: true,
    });
    const body = '{"event": "push", "text": "héllo\\nworld"}';
    const posted = await request('POST', `/api/structures/${enabled.structureId}/webhook?api_key=${t.key}`, undefined, {
      raw: body,
      headers: { 'content-type': 'text/plain' },
    });
    expect(posted.status, posted.text).to.equal(200);
    // The Structure (what the interface documents) plus the run that was started.
    const structure = (await as(t.key).get(`/api/structures/${enabled.structureId}`)).body;
    expect(posted.body).to.deep.equal({ ...structure, structure_run_id: posted.body.structure_run_id });
    const argsOf = async (answer: any) =>
      (await as(t.key).get(`/api/structure-runs/${answer.structure_run_id}`)).body.args;
    expect(await argsOf(posted.body)).to.deep.equal([body]);
    const run = await waitForRun(t.key, posted.body.structure_run_id);
    expect(run.status).to.equal('SUCCEEDED');
    expect(await lines(t.key, run.structure_run_id)).to.deep.equal([JSON.stringify([body]).replace(/é/, '\\u00e9')]);
    const viaGet = await request('GET', `/api/structures/${enabled.structureId}/webhook?api_key=${t.key}`);
    expect(viaGet.status).to.equal(200);
    expect(await argsOf(viaGet.body)).to.deep.equal([]);
    const byHeader = await as(t.key).post(`/api/structures/${enabled.structureId}/webhook`, { any: 'json' });
    expect(await argsOf(byHeader.body)).to.deep.equal(['{"any":"json"}']);
    expect(
      (await request('POST', `/api/structures/${enabled.structureId}/webhook?api_key=wrong`, undefined, { raw: 'x' }))
        .status,
    ).to.equal(401);
    expect(
      (await request('POST', `/api/structures/${enabled.structureId}/runs?api_key=${t.key}`, { args: [] })).status,
    ).to.equal(401);
    const tooBig = await request('POST', `/api/structures/${enabled.structureId}/webhook?api_key=${t.key}`, undefined, {
      raw: 'x'.repeat(131_072),
    });
    expect(tooBig.status).to.equal(413);

    const disabled = await structureWithBuild(t.organizationId, { files: { 'structure.py': 'print(1)\n' } });
    const refused = await request(
      'POST',
      `/api/structures/${disabled.structureId}/webhook?api_key=${t.key}`,
      undefined,
      { raw: 'x' },
    );
    expect(refused.status).to.equal(409);
    expect(refused.body.errors[0].message).to.match(/Webhooks are disabled/);
    expect(await getStack().ds.getRepository(Run).countBy({ resource_id: disabled.structureId })).to.equal(0);
  });
});

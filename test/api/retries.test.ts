// Retry policies through the public api (docs/run-control.md#retries-of-lost-runs): declared on a structure,
// function or tool and overridden per structure run, validated with 400s that name the member, shown on the
// records; a run whose attempt ended as its policy says runs again as the same run, its code told the attempt
// (TARMAC_RUN_ATTEMPT), each attempt on its record. (Lost workers: the workflow tests and the admission drill.)
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { newTenant } from '../harness/stack';

/** Fails (exit 3) on its first attempt, succeeds on the others; prints the attempt. */
const FLAKY = `
import os, sys
attempt = os.environ["TARMAC_RUN_ATTEMPT"]
print("attempt " + attempt, flush=True)
sys.exit(3 if attempt == "1" else 0)
`;

const RETRY_FAILED = { max_attempts: 3, initial_interval: 0.2, backoff: 2, max_interval: 1, on: ['Failed'] };

describe('retry policies', function () {
  this.timeout(120_000);

  it('refuses a policy past its bounds or contradicting itself with a 400 naming the member', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': FLAKY } });
    const refusals: Array<[unknown, string]> = [
      [{ max_attempts: 11 }, '/body/retry_policy'],
      [{ max_attempts: 0 }, '/body/retry_policy'],
      [{ on: ['Cancelled'] }, '/body/retry_policy'],
      [{ on: [] }, '/body/retry_policy'],
      [{ backoff: 0.5 }, '/body/retry_policy'],
      [{ max_atempts: 3 }, '/body/retry_policy'],
      [{ initial_interval: 30, max_interval: 10 }, '/body/retry_policy/max_interval'],
    ];
    for (const [policy, path] of refusals) {
      for (const [method, url, body] of [
        ['post', `/api/structures/${s.structureId}/runs`, { args: [], retry_policy: policy }],
        ['patch', `/api/structures/${s.structureId}`, { retry_policy: policy }],
        ['post', '/api/functions', { name: 'f', retry_policy: policy }],
      ] as const) {
        const res = await api[method](url, body);
        expect(res.status, `${method} ${url} ${JSON.stringify(policy)}: ${res.text}`).to.equal(400);
        expect(res.body.type).to.be.a('string');
        expect(JSON.stringify(res.body.errors), JSON.stringify(policy)).to.include(path);
      }
    }
    const runs = await api.get(`/api/structures/${s.structureId}/runs`);
    expect(runs.body.structure_runs, 'no run was made').to.have.length(0);
  });

  it('keeps a policy on the resource, with its defaults, until it is set to null', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': FLAKY } });
    expect((await api.get(`/api/structures/${s.structureId}`)).body).to.not.have.property('retry_policy');
    const set = await api.patch(`/api/structures/${s.structureId}`, { retry_policy: { max_attempts: 4 } });
    expect(set.status, set.text).to.equal(200);
    const expected = { max_attempts: 4, initial_interval: 1, backoff: 2, max_interval: 60, on: ['WorkerLost'] };
    expect(set.body.retry_policy).to.deep.equal(expected);
    expect((await api.get(`/api/structures/${s.structureId}`)).body.retry_policy).to.deep.equal(expected);
    const cleared = await api.patch(`/api/structures/${s.structureId}`, { retry_policy: null });
    expect(cleared.body).to.not.have.property('retry_policy');

    const tool = await api.post('/api/tools', {
      name: 'retried',
      retry_policy: { max_attempts: 2, on: ['TimeLimit'] },
    });
    expect(tool.status, tool.text).to.equal(201);
    expect(tool.body.retry_policy).to.include({ max_attempts: 2 });
    expect(tool.body.retry_policy.on).to.deep.equal(['TimeLimit']);
  });

  it("runs a failed attempt again as the same run when the structure's policy says so, each attempt recorded", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': FLAKY } });
    expect((await api.patch(`/api/structures/${s.structureId}`, { retry_policy: RETRY_FAILED })).status).to.equal(200);

    const created = await api.post(`/api/structures/${s.structureId}/runs`, { args: [] });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ status: 'QUEUED', attempt: 1 });
    expect(created.body.retry_policy).to.deep.equal(RETRY_FAILED);
    const run = await waitForRun(t.key, created.body.structure_run_id);
    expect(run.status).to.equal('SUCCEEDED');
    expect(run.attempt).to.equal(2);
    expect(run.attempts.map((a: any) => [a.attempt, a.status, a.reason])).to.deep.equal([
      [1, 'FAILED', 'Completed'],
      [2, 'SUCCEEDED', 'Completed'],
    ]);
    expect(run.attempts[0].message).to.equal('The process exited with code 3');
    for (const a of run.attempts) expect(a.started_at <= a.ended_at, JSON.stringify(a)).to.equal(true);
    expect(run.attempts[0].ended_at <= run.attempts[1].started_at).to.equal(true);

    const logs = await api.get(`/api/structure-runs/${run.structure_run_id}/logs`);
    expect(logs.body.logs).to.deep.equal(['attempt 1', 'attempt 2']);
    const events = (await api.get(`/api/structure-runs/${run.structure_run_id}/events?limit=100`)).body.events;
    const types = events.map((e: any) => e.type);
    expect(types.filter((x: string) => x === 'StructureRunStarting')).to.have.length(2);
    const retrying = events.find((e: any) => e.type === 'RunRetrying');
    expect(retrying.origin).to.equal('SYSTEM');
    expect(retrying.payload).to.include({ status: 'QUEUED', attempt: 2, reason: 'Failed', retry_in_seconds: 0.2 });
    expect(types.indexOf('RunRetrying')).to.be.below(types.lastIndexOf('StructureRunStarting'));
  });

  it("runs with the request's policy instead of the structure's, and with none when the request says null", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': FLAKY } });
    expect((await api.patch(`/api/structures/${s.structureId}`, { retry_policy: RETRY_FAILED })).status).to.equal(200);

    const once = await api.post(`/api/structures/${s.structureId}/runs`, { args: [], retry_policy: null });
    expect(once.status, once.text).to.equal(201);
    expect(once.body).to.not.have.property('retry_policy');
    const ended = await waitForRun(t.key, once.body.structure_run_id);
    expect(ended).to.include({ status: 'FAILED', attempt: 1 });
    expect(ended).to.not.have.property('attempts');

    const lostOnly = await api.post(`/api/structures/${s.structureId}/runs`, {
      args: [],
      retry_policy: { max_attempts: 2 },
    });
    expect(lostOnly.body.retry_policy).to.include({ max_attempts: 2 });
    expect(lostOnly.body.retry_policy.on).to.deep.equal(['WorkerLost']);
    const notRetried = await waitForRun(t.key, lostOnly.body.structure_run_id);
    expect(notRetried).to.include({ status: 'FAILED', attempt: 1 });
    expect(notRetried.attempts).to.have.length(1);
  });
});

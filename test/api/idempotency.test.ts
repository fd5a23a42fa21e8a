// Idempotency keys (docs/run-control.md#idempotency-keys): a create repeated with its Idempotency-Key answers
// the first record (200, Idempotent-Replayed: true), another body is a 422, an expired key makes a new
// record, concurrent repeats through two api processes make one; for every kind of create.
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { sweepExpiredKeys } from '../../src/jobs/idempotency';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { ECHO_PROGRAM, TERMINAL, waitForRun } from '../harness/runs';
import { configWith, getStack, newTenant, startApi } from '../harness/stack';

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });
const replayed = (r: { headers: Headers }) => r.headers.get('idempotent-replayed');

const TOOL = `
class Echo:
    name = "Echo"

    def say(self, params):
        """Says what it was given."""
        return str(params)


def init_tool():
    return Echo()
`;

describe('idempotency keys', function () {
  this.timeout(180_000);

  it('answers a repeat with the first run as it is now; another body is 422; bad keys are 400', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
    const path = `/api/structures/${s.structureId}/runs`;

    const first = await api.post(path, { args: ['a'] }, withKey('order-1'));
    expect(first.status, first.text).to.equal(201);
    expect(replayed(first)).to.equal(null);
    expect(first.body.idempotency_key).to.equal('order-1');
    const ended = await waitForRun(t.key, first.body.structure_run_id);

    // The same body in another member order is the same request.
    const again = await api.post(path, { env_vars: [], args: ['a'] }, withKey('order-1'));
    expect(again.status, again.text).to.equal(200);
    expect(replayed(again)).to.equal('true');
    expect(again.body).to.deep.equal(ended);
    expect((await api.get(`/api/structure-runs/${ended.structure_run_id}`)).body.idempotency_key).to.equal('order-1');

    const other = await api.post(path, { args: ['b'] }, withKey('order-1'));
    expect(other.status, other.text).to.equal(422);
    expect(other.body.type).to.equal('IdempotencyKeyReusedError');
    expect(other.body.errors[0].message).to.include('"order-1"');

    // Without a key, and with another key: new runs that show no key, or theirs.
    const plain = await api.post(path, { args: ['a'] });
    expect(plain.status).to.equal(201);
    expect(plain.body).to.not.have.property('idempotency_key');
    const second = await api.post(path, { args: ['a'] }, withKey('order-2'));
    expect([second.status, second.body.idempotency_key]).to.deep.equal([201, 'order-2']);

    // The scope is the organization: another tenant's same key on its own structure makes its own run.
    const u = await newTenant();
    const s2 = await structureWithBuild(u.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
    const theirs = await as(u.key).post(`/api/structures/${s2.structureId}/runs`, { args: ['a'] }, withKey('order-1'));
    expect(theirs.status).to.equal(201);

    for (const bad of ['', 'k'.repeat(256)]) {
      const res = await api.post(path, { args: ['a'] }, withKey(bad));
      expect(res.status, res.text).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
      expect(res.body.errors[0].path).to.equal('/header/Idempotency-Key');
    }
    expect((await api.post(path, { args: ['a'] }, withKey('k'.repeat(255)))).status).to.equal(201);
    const runs = await getStack().ds.getRepository(Run).countBy({ resource_id: s.structureId });
    expect(runs).to.equal(4);
  });

  it('makes a new run once the key expired (IDEMPOTENCY_TTL), and the reconciler sweeps expired keys', async () => {
    const stack = getStack();
    const api = await startApi(stack.env.client, 0, configWith({ IDEMPOTENCY_TTL: '1s' }));
    try {
      const t = await newTenant();
      const client = as(t.key, api.baseUrl);
      const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
      const path = `/api/structures/${s.structureId}/runs`;
      const first = await client.post(path, { args: [] }, withKey('short'));
      expect(first.status).to.equal(201);
      expect((await client.post(path, { args: [] }, withKey('short'))).status).to.equal(200);
      await new Promise((r) => setTimeout(r, 1500));
      // Expired: the key is free again, also for another body.
      const later = await client.post(path, { args: ['other'] }, withKey('short'));
      expect(later.status, later.text).to.equal(201);
      expect(later.body.structure_run_id).to.not.equal(first.body.structure_run_id);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await sweepExpiredKeys(stack.ds)).to.be.greaterThan(0);
      const [{ n }] = await stack.ds.query(
        `SELECT count(*)::int AS n FROM idempotency_keys WHERE organization_id = $1`,
        [t.organizationId],
      );
      expect(n).to.equal(0);
    } finally {
      await api.close();
    }
  });

  it('takes over a key whose record never got its workflow (its api died between the commit and the start)', async () => {
    const { ds } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
    const path = `/api/structures/${s.structureId}/runs`;
    // What a SIGKILLed api leaves: the key and a QUEUED record committed, no workflow. Made from a real create by
    // pointing its key at a copy of its row under an id no workflow has.
    const abandon = async (key: string, ageSeconds: number) => {
      const first = await api.post(path, { args: ['a'] }, withKey(key));
      expect(first.status, first.text).to.equal(201);
      const [{ id }] = await ds.query(`SELECT gen_random_uuid()::text AS id`);
      await ds.query(
        `INSERT INTO runs SELECT (jsonb_populate_record(NULL::runs, to_jsonb(r) ||
           jsonb_build_object('run_id', $2::uuid, 'status', 'QUEUED'))).* FROM runs r WHERE run_id = $1`,
        [first.body.structure_run_id, id],
      );
      await ds.query(
        `UPDATE idempotency_keys SET record_id = $2, created_at = now() - make_interval(secs => $3) WHERE key = $1`,
        [key, id, ageSeconds],
      );
      return id as string;
    };
    const repeat = () => api.post(path, { args: ['a'] }, withKey('lost-answer'));

    const abandoned = await abandon('lost-answer', 60);
    const again = await repeat();
    expect(again.status, again.text).to.equal(201);
    expect(replayed(again)).to.equal(null);
    expect(again.body.structure_run_id).to.not.equal(abandoned);
    expect((await waitForRun(t.key, again.body.structure_run_id)).status).to.equal('SUCCEEDED');
    expect(await ds.query(`SELECT 1 FROM runs WHERE run_id = $1`, [abandoned])).to.deep.equal([]);
    // The key now names the new run: the next repeat is its replay.
    const third = await repeat();
    expect([third.status, third.body.structure_run_id]).to.deep.equal([200, again.body.structure_run_id]);

    // A younger key's creator may still be starting its workflow: the repeat waits until it could not be (15 s
    // from the claim), then takes it over.
    const young = await abandon('young', 1);
    const asked = Date.now();
    const late = await api.post(path, { args: ['a'] }, withKey('young'));
    expect(late.status, late.text).to.equal(201);
    expect(late.body.structure_run_id).to.not.equal(young);
    expect(Date.now() - asked).to.be.within(12_000, 20_000);
  });

  it('makes one run of 100 concurrent repeats through two api processes', async () => {
    const stack = getStack();
    const apis = [await startApi(stack.env.client), await startApi(stack.env.client)];
    try {
      const t = await newTenant();
      const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          as(t.key, apis[i % 2].baseUrl).post(`/api/structures/${s.structureId}/runs`, { args: [] }, withKey('race')),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(
        statuses.filter((x) => x === 201),
        statuses.join(','),
      ).to.have.length(1);
      expect(statuses.filter((x) => x === 200)).to.have.length(99);
      expect(new Set(answers.map((r) => r.body.structure_run_id)).size).to.equal(1);
      expect(await stack.ds.getRepository(Run).countBy({ resource_id: s.structureId })).to.equal(1);
    } finally {
      await Promise.all(apis.map((a) => a.close()));
    }
  });

  it('covers function execute, tool activities, assistant runs and replays', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const count = (where: { resource_id?: string; assistant_id?: string; replayed_from_run_id?: string }) =>
      getStack().ds.getRepository(Run).countBy(where);

    const f = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'function.py': 'def handler(event):\n    return {"echo": event["body"]}\n' },
      mainFile: 'function.py',
    });
    const executed = await api.post(`/api/functions/${f.structureId}/execute`, { n: 1 }, withKey('f'));
    expect([executed.status, executed.body]).to.deep.equal([200, { echo: { n: 1 } }]);
    const repeat = await api.post(`/api/functions/${f.structureId}/execute`, { n: 1 }, withKey('f'));
    expect([repeat.status, replayed(repeat), repeat.body]).to.deep.equal([200, 'true', { echo: { n: 1 } }]);
    expect((await api.post(`/api/functions/${f.structureId}/execute?x=1`, { n: 1 }, withKey('f'))).status).to.equal(
      422,
    );
    expect(await count({ resource_id: f.structureId })).to.equal(1);
    const fnRun = (await api.get(`/api/functions/${f.structureId}/runs`)).body.function_runs[0];
    expect(fnRun.idempotency_key).to.equal('f');

    // Replay of one run: the key's target is the replayed run.
    const replay = await api.post(`/api/function-runs/${fnRun.function_run_id}/replay`, {}, withKey('r'));
    expect(replay.status, replay.text).to.equal(201);
    const replayAgain = await api.post(`/api/function-runs/${fnRun.function_run_id}/replay`, {}, withKey('r'));
    expect([replayAgain.status, replayAgain.body.function_run_id]).to.deep.equal([200, replay.body.function_run_id]);
    expect(await count({ replayed_from_run_id: fnRun.function_run_id })).to.equal(1);

    const tool = await structureWithBuild(t.organizationId, {
      kind: 'tool',
      files: { 'tool.py': TOOL },
      mainFile: 'tool.py',
    });
    const said = await api.post(`/api/tools/${tool.structureId}/activities/say`, { w: 1 }, withKey('t'));
    expect(said.status, said.text).to.equal(200);
    const saidAgain = await api.post(`/api/tools/${tool.structureId}/activities/say`, { w: 1 }, withKey('t'));
    expect([saidAgain.status, replayed(saidAgain), saidAgain.body]).to.deep.equal([200, 'true', said.body]);
    expect(await count({ resource_id: tool.structureId })).to.equal(1);

    const model = provider.uniqueModel();
    provider.script({ model, times: Infinity, respond: () => ({ text: 'hi' }) });
    const assistant = (await api.post('/api/assistants', { name: 'Once' })).body;
    const body = { input: 'Hello', model: `local/${model}` };
    const run = await api.post(`/api/assistants/${assistant.assistant_id}/runs`, body, withKey('a'));
    expect([run.status, run.body.idempotency_key]).to.deep.equal([201, 'a']);
    const runAgain = await api.post(`/api/assistants/${assistant.assistant_id}/runs`, body, withKey('a'));
    expect([runAgain.status, runAgain.body.assistant_run_id]).to.deep.equal([200, run.body.assistant_run_id]);
    expect(await count({ assistant_id: assistant.assistant_id })).to.equal(1);
    for (let i = 0; i < 600; i++) {
      const r = (await api.get(`/api/assistant-runs/${run.body.assistant_run_id}`)).body;
      if (TERMINAL.includes(r.status)) break;
      await new Promise((res) => setTimeout(res, 50));
    }
  });

  it('covers knowledge base jobs and data jobs', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id;
    const kb = (
      await api.post('/api/knowledge-bases', {
        name: 'KB',
        type: 'gtc_hybrid_sql_pg_vector',
        config: { gtc_hybrid_sql_pg_vector: {} },
        asset_paths: [`${bucketId}/docs/`],
      })
    ).body;
    const jobs = `/api/knowledge-bases/${kb.knowledge_base_id}/knowledge-base-jobs`;
    const job = await api.post(jobs, undefined, withKey('kb'));
    expect([job.status, job.body.idempotency_key]).to.deep.equal([202, 'kb']);
    // A repeat while the first job is open answers it (without the key: 409, one job at a time).
    const jobAgain = await api.post(jobs, undefined, withKey('kb'));
    expect([jobAgain.status, replayed(jobAgain)]).to.deep.equal([200, 'true']);
    expect(jobAgain.body.knowledge_base_job_id).to.equal(job.body.knowledge_base_job_id);
    expect((await api.get(jobs)).body.knowledge_base_jobs).to.have.length(1);

    const connector = await api.post('/api/data-connectors', {
      name: 'Wiki',
      type: 'confluence',
      config: { confluence: { atlassian_email: 'me@example.test', atlassian_api_token: 'tok', domain: 'x.test' } },
    });
    expect(connector.status, connector.text).to.equal(201);
    // Its first job (started with it) must end before another can start.
    for (let i = 0; i < 1200; i++) {
      const first = (await api.get(`/api/data-jobs/${connector.body.data_job_id}`)).body;
      if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(first.status)) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    const dataJobs = `/api/data-connectors/${connector.body.data_connector_id}/data-jobs`;
    const before = (await api.get(dataJobs)).body.data_jobs.length;
    const dataJob = await api.post(dataJobs, undefined, withKey('dj'));
    expect([dataJob.status, dataJob.body.idempotency_key]).to.deep.equal([202, 'dj']);
    const dataJobAgain = await api.post(dataJobs, undefined, withKey('dj'));
    expect([dataJobAgain.status, dataJobAgain.body.data_job_id]).to.deep.equal([200, dataJob.body.data_job_id]);
    expect((await api.get(dataJobs)).body.data_jobs).to.have.length(before + 1);
  });
});

// Data connectors through HTTP: CRUD with secrets in and never out, schedules (Temporal Schedules, removed
// with the connector), and real jobs of the three sources this build serves: webscraper against a local site
// (robots.txt, a 404, same-site crawl, clean main text, refusal of private addresses, incremental re-runs and
// removed pages), data_lake (a copy between buckets) and structure (a structure run's output artifacts), with
// transforms (one that succeeds, one that fails for an item), metadata on the assets that knowledge base
// chunks carry, and the chain to a knowledge base that covers the connector's prefix.
import { expect } from 'chai';
import { Asset, DataConnector } from '../../src/persistence/entities';
import { userScheduleId } from '../../src/temporal/user-schedules';
import { structureWithBuild } from '../harness/builds';
import { as, request } from '../harness/client';
import { htmlPage, startLocalSite, type LocalSite } from '../harness/local-site';
import { PY_PRELUDE } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

type Api = ReturnType<typeof as>;

async function jobEnd(api: Api, jobId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = await api.get(`/api/data-jobs/${jobId}`);
    expect(job.status, job.text).to.equal(200);
    if (['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.body.status)) return job.body;
    if (Date.now() > deadline) throw new Error(`data job ${jobId} still ${job.body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runJob(api: Api, connectorId: string) {
  const created = await api.post(`/api/data-connectors/${connectorId}/data-jobs`);
  expect(created.status, created.text).to.equal(202);
  expect(created.body.status).to.equal('QUEUED');
  return jobEnd(api, created.body.data_job_id);
}

async function upload(api: Api, bucketId: string, name: string, content: string) {
  expect((await api.put(`/api/buckets/${bucketId}/assets`, { name })).status).to.equal(201);
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
  expect((await request('PUT', url.body.url, undefined, { raw: content })).status).to.equal(200);
}

async function download(api: Api, bucketId: string, name: string): Promise<string> {
  const url = await api.post(`/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'GET' });
  return (await fetch(url.body.url)).text();
}

const lakeAssets = (bucketId: string, connectorId: string) =>
  getStack()
    .ds.getRepository(Asset)
    .createQueryBuilder('a')
    .where('a.bucket_id = :bucketId AND a.name LIKE :p', { bucketId, p: `data-connectors/${connectorId}/%` })
    .orderBy('a.name')
    .getMany();

describe('data connectors', function () {
  this.timeout(120_000);
  let api: Api;
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  let site: LocalSite;

  before(async () => {
    tenant = await newTenant('dc');
    api = as(tenant.key);
    site = await startLocalSite();
  });
  after(() => site.close());

  it('creates (starting a job), reads, lists, updates and deletes; secrets go in and never come out', async () => {
    const created = await api.post('/api/data-connectors', {
      name: 'Wiki',
      type: 'confluence',
      config: {
        confluence: { atlassian_email: 'me@example.test', atlassian_api_token: 'tok-SECRET-1', domain: 'x.test' },
      },
      description: 'our wiki',
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ name: 'Wiki', type: 'wiki', description: 'our wiki' });
    expect(created.body.config).to.deep.equal({
      wiki: { wiki_email: 'me@example.test', domain: 'x.test' },
      confluence: { atlassian_email: 'me@example.test', domain: 'x.test' },
    });
    expect(created.body.data_job_id).to.be.a('string');
    expect(created.text).to.not.include('tok-SECRET-1');
    const id = created.body.data_connector_id;
    const row = await getStack().ds.getRepository(DataConnector).findOneByOrFail({ data_connector_id: id });
    expect(JSON.stringify(row.config)).to.not.include('tok-SECRET-1');
    expect(row.config.wiki.wiki_api_token).to.have.property('sealed');
    // The default bucket of the organization when none is named.
    const org = await getStack().ds.query(`SELECT default_bucket_id FROM organizations WHERE organization_id = $1`, [
      tenant.organizationId,
    ]);
    expect(created.body.bucket_id).to.equal(org[0].default_bucket_id);

    const got = await api.get(`/api/data-connectors/${id}`);
    expect(got.body.config).to.deep.equal(created.body.config);
    const listed = await api.get('/api/data-connectors?page_size=100');
    expect(listed.body.data_connectors.map((c: any) => c.data_connector_id)).to.include(id);
    expect(listed.text).to.not.include('tok-SECRET-1');
    const jobs = await api.get(`/api/data-connectors/${id}/data-jobs`);
    expect(jobs.body.data_jobs.map((j: any) => j.data_job_id)).to.deep.equal([created.body.data_job_id]);
    await jobEnd(api, created.body.data_job_id);

    const renamed = await api.patch(`/api/data-connectors/${id}`, { name: 'Renamed' });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(renamed.body).to.include({ name: 'Renamed' }).and.not.have.property('data_job_id');
    const reconfigured = await api.patch(`/api/data-connectors/${id}`, {
      config: { wiki: { wiki_email: 'you@example.test', wiki_api_token: 'tok-SECRET-2', domain: 'y.test' } },
    });
    expect(reconfigured.status, reconfigured.text).to.equal(200);
    expect(reconfigured.body.data_job_id).to.be.a('string').and.not.equal(created.body.data_job_id);
    expect(reconfigured.text).to.not.include('tok-SECRET-2');
    const wrongMember = await api.patch(`/api/data-connectors/${id}`, {
      config: { webscraper: { urls: ['http://127.0.0.1/'] } },
    });
    expect(wrongMember.status).to.equal(409);
    expect(wrongMember.body.errors[0].message).to.include('"wiki"');
    await jobEnd(api, reconfigured.body.data_job_id);

    expect((await api.delete(`/api/data-connectors/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/data-connectors/${id}`)).status).to.equal(404);
    expect((await api.get(`/api/data-jobs/${created.body.data_job_id}`)).status).to.equal(404);
  });

  it('refuses bad input: unknown types, a config of another type, bad URLs, unknown ids, bad schedules', async () => {
    const bad = async (body: unknown, status: number, text: string) => {
      const res = await api.post('/api/data-connectors', body);
      expect(res.status, res.text).to.equal(status);
      expect(res.text).to.include(text);
    };
    await bad({ name: 'x', type: 'ftp', config: { webscraper: { urls: ['http://a.test/'] } } }, 400, 'type');
    await bad({ name: 'x', type: 'data_lake', config: { webscraper: { urls: ['http://a.test/'] } } }, 400, 'config');
    await bad({ name: 'x', type: 'webscraper', config: { webscraper: { urls: ['file:///etc/passwd'] } } }, 400, 'urls');
    await bad({ name: 'x', type: 'webscraper', config: { webscraper: { urls: [] } } }, 400, 'urls');
    const unknown = '0b7e4d52-8f3a-4c1e-9d2b-3a4f5e6d7c8b';
    await bad({ name: 'x', type: 'data_lake', config: { data_lake: { bucket_id: unknown } } }, 409, unknown);
    await bad({ name: 'x', type: 'structure', config: { structure: { structure_id: unknown } } }, 409, unknown);
    const lake = { name: 'x', type: 'webscraper', config: { webscraper: { urls: ['http://a.test/'] } } };
    await bad({ ...lake, transforms: [{ structure: { structure_id: unknown } }] }, 409, unknown);
    await bad({ ...lake, schedule_expression: 'every day' }, 400, 'rate(');
    await bad({ ...lake, schedule_expression: 'cron(0 0 * * 9)' }, 400, 'schedule_expression');
    expect((await api.get(`/api/data-connectors/${unknown}`)).status).to.equal(404);
    expect((await api.get('/api/data-connectors/not-a-uuid')).status).to.equal(400);
    expect((await api.post(`/api/data-jobs/${unknown}/cancel`)).status).to.equal(404);
  });

  it('keeps a Temporal Schedule per connector: created, changed, triggered (not doubled while a job is open), removed', async () => {
    const temporal = getStack().env.client;
    site.hanging.add('/hang');
    const created = await api.post('/api/data-connectors', {
      name: 'Scheduled',
      type: 'webscraper',
      config: { webscraper: { urls: [`${site.url}/hang`] } },
      schedule_expression: 'cron(0/30 9-17 ? * MON-FRI *)',
    });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data_connector_id;
    expect(created.body.schedule_expression).to.equal('cron(0/30 9-17 ? * MON-FRI *)');
    const handle = temporal.schedule.getHandle(userScheduleId('data-connector', id));
    const described = await handle.describe();
    expect(described.policies.overlap).to.equal('SKIP');
    expect(described.action).to.include({ workflowType: 'scheduledJobWorkflow' });
    expect(JSON.stringify(described.spec)).to.include('"hour"');

    // The first job hangs on its page: a scheduled start meanwhile is skipped, not doubled.
    await handle.trigger();
    const deadline = Date.now() + 20_000;
    let outcome: unknown;
    while (!outcome && Date.now() < deadline) {
      const runs = (await handle.describe()).info.recentActions;
      const last = runs[runs.length - 1];
      if (last) outcome = await temporal.workflow.getHandle(last.action.workflow.workflowId).result();
      else await new Promise((r) => setTimeout(r, 200));
    }
    expect(outcome).to.have.property('skipped').that.includes('still open');
    expect((await api.get(`/api/data-connectors/${id}/data-jobs`)).body.data_jobs).to.have.length(1);

    const changed = await api.patch(`/api/data-connectors/${id}`, { schedule_expression: 'rate(2 hours)' });
    expect(changed.status, changed.text).to.equal(200);
    expect(JSON.stringify((await handle.describe()).spec)).to.include('7200');
    const cancelled = await api.post(`/api/data-jobs/${created.body.data_job_id}/cancel`);
    expect(cancelled.status, cancelled.text).to.equal(200);
    expect(cancelled.body.status).to.equal('CANCELLED');
    // Now a scheduled start makes a job.
    await handle.trigger();
    for (let i = 0; i < 100; i++) {
      if ((await api.get(`/api/data-connectors/${id}/data-jobs`)).body.data_jobs.length === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const jobs = (await api.get(`/api/data-connectors/${id}/data-jobs`)).body.data_jobs;
    expect(jobs).to.have.length(2);
    expect(jobs[0].created_by).to.equal('schedule');
    await api.post(`/api/data-jobs/${jobs[0].data_job_id}/cancel`);

    const cleared = await api.patch(`/api/data-connectors/${id}`, { schedule_expression: null });
    expect(cleared.body).to.not.have.property('schedule_expression');
    const gone = await handle.describe().then(
      () => 'exists',
      (err: Error) => err.constructor.name,
    );
    expect(gone).to.equal('ScheduleNotFoundError');
    await api.patch(`/api/data-connectors/${id}`, { schedule_expression: 'rate(1 day)' });
    expect((await handle.describe()).spec).to.be.an('object');
    expect((await api.delete(`/api/data-connectors/${id}`)).status).to.equal(204);
    expect(
      await handle.describe().then(
        () => 'exists',
        (err: Error) => err.constructor.name,
      ),
    ).to.equal('ScheduleNotFoundError');
  });

  it('webscraper: robots.txt, 404s, same-site crawl, main text, metadata; re-runs skip unchanged pages and drop removed ones', async () => {
    const words = 'This paragraph is long enough to be the main content of the page and nothing else is here';
    site.pages.set('/robots.txt', ['text/plain', 'User-agent: *\nDisallow: /private\n']);
    site.pages.set('/docs/index.html', [
      'text/html; charset=utf-8',
      htmlPage(
        'Docs home',
        [`${words} (home).`],
        ['/docs/a.html', '/private/x.html', '/docs/missing.html', 'http://other.invalid/'],
      ),
    ]);
    site.pages.set('/docs/a.html', ['text/html', htmlPage('Page A', [`${words} (alpha).`, 'Tom &amp; Jerry.'])]);
    site.pages.set('/private/x.html', ['text/html', htmlPage('Secret', ['never fetched'])]);
    site.pages.set('/docs/notes.txt', ['text/plain', 'plain notes']);
    site.pages.set('/old', ['redirect', '/docs/notes.txt']);
    const created = await api.post('/api/data-connectors', {
      name: 'Docs',
      type: 'webscraper',
      config: {
        webscraper: { urls: [`${site.url}/docs/index.html`, `${site.url}/old`, 'http://10.255.255.1/'], max_depth: 1 },
      },
    });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data_connector_id;
    const bucketId = created.body.bucket_id;
    const job = await jobEnd(api, created.body.data_job_id);
    expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
    expect(job.bytes_ingested).to.be.greaterThan(0);
    const errorTypes = Object.fromEntries(job.errors.map((e: any) => [e.path, e.type]));
    expect(errorTypes).to.deep.include({
      [`${site.url}/private/x.html`]: 'RobotsDisallowed',
      [`${site.url}/docs/missing.html`]: 'NotFound',
      'http://10.255.255.1/': 'AddressRefused',
    });
    expect(job.errors.find((e: any) => e.type === 'AddressRefused').message).to.include('OUTBOUND_ALLOW');
    expect(site.requests.some((r) => r.path.startsWith('/private'))).to.equal(false);
    expect(site.requests.every((r) => r.userAgent.startsWith('TarmacDataConnector/'))).to.equal(true);

    const host = new URL(site.url).host.replace(':', '_');
    const prefix = `data-connectors/${id}/`;
    const assets = await lakeAssets(bucketId, id);
    expect(assets.map((a) => a.name)).to.deep.equal([
      `${prefix}${host}/docs/a.html.txt`,
      `${prefix}${host}/docs/index.html.txt`,
      `${prefix}${host}/docs/notes.txt`,
    ]);
    const a = assets[0];
    expect(a.meta).to.include({
      source_uri: `${site.url}/docs/a.html`,
      title: 'Page A',
      content_type: 'text/plain; charset=utf-8',
      data_connector_id: id,
    });
    expect(a.meta!.content_hash).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(assets[2].meta).to.include({ source_uri: `${site.url}/docs/notes.txt`, requested_url: `${site.url}/old` });
    const text = await download(api, bucketId, a.name);
    expect(text).to.include('(alpha).').and.include('Tom & Jerry.');
    expect(text).to.not.include('About us menu').and.not.include('Copyright footer').and.not.include('tracking');

    // Unchanged: nothing rewritten.
    const again = await runJob(api, id);
    expect(again.status).to.equal('SUCCEEDED');
    expect(again.status_detail.stats).to.include({ written: 0, unchanged: 3, removed: 0 });
    expect((await lakeAssets(bucketId, id)).map((x) => x.updated_at.getTime())).to.deep.equal(
      assets.map((x) => x.updated_at.getTime()),
    );
    // A changed page is rewritten; a page no longer linked leaves the lake.
    site.pages.set('/docs/index.html', ['text/html', htmlPage('Docs home', [`${words} (home, edited).`], [])]);
    const third = await runJob(api, id);
    expect(third.status_detail.stats).to.include({ written: 1, removed: 1 });
    expect((await lakeAssets(bucketId, id)).map((x) => x.name)).to.deep.equal([
      `${prefix}${host}/docs/index.html.txt`,
      `${prefix}${host}/docs/notes.txt`,
    ]);
    // A job whose every item fails ends FAILED, with each failure listed.
    await api.patch(`/api/data-connectors/${id}`, {
      config: { webscraper: { urls: [`${site.url}/nothing-here`] } },
    });
    const jobs = (await api.get(`/api/data-connectors/${id}/data-jobs?status=QUEUED,RUNNING,FAILED`)).body.data_jobs;
    const failed = await jobEnd(api, jobs[0].data_job_id);
    expect(failed.status).to.equal('FAILED');
    expect(failed.errors).to.deep.equal([
      { type: 'NotFound', message: `${site.url}/nothing-here answered 404`, path: `${site.url}/nothing-here` },
    ]);
  });

  it("data_lake: copies a bucket's assets (all, or by name and prefix) and the chain feeds a covering knowledge base", async () => {
    const source = (await api.post('/api/buckets', { name: 'source' })).body.bucket_id;
    const target = (await api.post('/api/buckets', { name: 'lake' })).body.bucket_id;
    await upload(api, source, 'docs/one.txt', 'the first document about zebras');
    await upload(api, source, 'docs/two.md', '# Two\nthe second document about giraffes');
    await upload(api, source, 'other/three.txt', 'not copied');
    const created = await api.post('/api/data-connectors', {
      name: 'Copy',
      type: 'data_lake',
      bucket_id: target,
      config: { data_lake: { bucket_id: source, asset_paths: ['docs/', 'missing.txt'] } },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.bucket_id).to.equal(target);
    const id = created.body.data_connector_id;
    const job = await jobEnd(api, created.body.data_job_id);
    expect(job.status).to.equal('SUCCEEDED');
    expect(job.errors).to.deep.equal([
      { type: 'NotFound', message: `No uploaded asset missing.txt in bucket ${source}`, path: 'missing.txt' },
    ]);
    const prefix = `data-connectors/${id}/`;
    expect((await lakeAssets(target, id)).map((a) => a.name)).to.deep.equal([
      `${prefix}docs/one.txt`,
      `${prefix}docs/two.md`,
    ]);
    expect(await download(api, target, `${prefix}docs/one.txt`)).to.equal('the first document about zebras');

    // A knowledge base over the connector's prefix gets a job when a job of the connector succeeds.
    const kb = await api.post('/api/knowledge-bases', {
      name: 'Lake KB',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      asset_paths: [`${target}/${prefix}`],
    });
    expect(kb.status, kb.text).to.equal(201);
    const second = await runJob(api, id);
    expect(second.status).to.equal('SUCCEEDED');
    expect(second.status_detail.knowledge_base_job_ids).to.have.length(1);
    const kbJobId = second.status_detail.knowledge_base_job_ids[0];
    for (let i = 0; i < 300; i++) {
      const kbJob = await api.get(`/api/knowledge-base-jobs/${kbJobId}`);
      if (kbJob.body.status === 'SUCCEEDED') break;
      expect(kbJob.body.status).to.be.oneOf(['QUEUED', 'RUNNING']);
      await new Promise((r) => setTimeout(r, 100));
    }
    const query = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/query`, { query: 'zebras' });
    expect(query.status, query.text).to.equal(200);
    expect(query.body.entries[0].meta).to.include({
      source_uri: `data_lake://${source}/docs/one.txt`,
      data_connector_id: id,
      asset_path: `${target}/${prefix}docs/one.txt`,
    });
    expect(query.body.entries[0].meta.content_hash).to.match(/^sha256:/);

    // A removed source asset leaves the lake at the next job.
    const asset = await api.delete(`/api/buckets/${source}/assets/docs/two.md`);
    expect(asset.status).to.be.oneOf([200, 204]);
    const third = await runJob(api, id);
    expect(third.status_detail.stats).to.include({ removed: 1 });
    expect((await lakeAssets(target, id)).map((a) => a.name)).to.deep.equal([`${prefix}docs/one.txt`]);
  });

  it("structure: the run's output artifacts become items; transforms replace items, a failing one is an item error", async () => {
    const producer = await structureWithBuild(tenant.organizationId, {
      files: {
        'structure.py': `${PY_PRELUDE}
items = [{"type": "TextArtifact", "name": "first", "value": "alpha " + " ".join(sys.argv[1:])},
         {"type": "TextArtifact", "value": "please FAIL this one"}]
finish = {"type": "FinishStructureRunEvent", "timestamp": time.time(),
          "payload": {"output_task_output": {"type": "ListArtifact", "value": items}}}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", [finish]) == 202
`,
      },
    });
    const upper = await structureWithBuild(tenant.organizationId, {
      files: {
        'structure.py': `${PY_PRELUDE}
item = json.loads(sys.argv[1])
if "FAIL" in item["value"]:
    print("refusing", file=sys.stderr)
    sys.exit(3)
out = {"type": "TextArtifact", "value": item["value"].upper() + " " + " ".join(sys.argv[2:])}
finish = {"type": "FinishStructureRunEvent", "timestamp": time.time(), "payload": {"output_task_output": out}}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", [finish]) == 202
`,
      },
    });
    const created = await api.post('/api/data-connectors', {
      name: 'From a structure',
      type: 'structure',
      config: { structure: { structure_id: producer.structureId, args: ['beta'] } },
      transforms: [{ structure: { structure_id: upper.structureId, args: ['(shouted)'] } }],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.transforms).to.deep.equal([
      { structure: { structure_id: upper.structureId, args: ['(shouted)'] } },
    ]);
    const id = created.body.data_connector_id;
    const job = await jobEnd(api, created.body.data_job_id);
    expect(job.status, JSON.stringify(job)).to.equal('SUCCEEDED');
    expect(job.errors).to.have.length(1);
    expect(job.errors[0]).to.include({ type: 'TransformFailed', path: 'output/2.txt' });
    expect(job.errors[0].message).to.include('FAILED');
    const assets = await lakeAssets(created.body.bucket_id, id);
    expect(assets.map((a) => a.name)).to.deep.equal([`data-connectors/${id}/output/1-first.txt`]);
    expect(assets[0].meta).to.include({ title: 'first', content_type: 'text/plain; charset=utf-8' });
    expect(assets[0].meta!.source_uri).to.match(new RegExp(`^structure://${producer.structureId}/runs/`));
    expect(await download(api, created.body.bucket_id, assets[0].name)).to.equal('ALPHA BETA (shouted)');
  });
  it('knowledge bases: schedule_expression has the same Temporal Schedule; transforms rewrite each text before chunking', async () => {
    const temporal = getStack().env.client;
    const bucketId = (await api.post('/api/buckets', { name: 'kb-docs' })).body.bucket_id;
    await upload(api, bucketId, 'notes/a.txt', 'quiet words about otters');
    const upper = await structureWithBuild(tenant.organizationId, {
      files: {
        'structure.py': `${PY_PRELUDE}
item = json.loads(sys.argv[1])
out = {"type": "TextArtifact", "value": item["value"].upper() + " " + sys.argv[2]}
finish = {"type": "FinishStructureRunEvent", "timestamp": time.time(), "payload": {"output_task_output": out}}
assert call("POST", "api/structure-runs/" + RUN_ID + "/events", [finish]) == 202
`,
      },
    });
    const badSchedule = await api.post('/api/knowledge-bases', {
      name: 'KB',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      schedule_expression: 'sometimes',
    });
    expect(badSchedule.status).to.equal(400);
    const kb = await api.post('/api/knowledge-bases', {
      name: 'Scheduled KB',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
      asset_paths: [`${bucketId}/notes/`],
      schedule_expression: 'rate(6 hours)',
      transforms: [{ structure: { structure_id: upper.structureId, args: ['[checked]'] } }],
    });
    expect(kb.status, kb.text).to.equal(201);
    expect(kb.body).to.include({ schedule_expression: 'rate(6 hours)' });
    const id = kb.body.knowledge_base_id;
    const handle = temporal.schedule.getHandle(userScheduleId('knowledge-base', id));
    expect(JSON.stringify((await handle.describe()).spec)).to.include('21600');
    await handle.trigger();
    let jobs: any[] = [];
    for (let i = 0; i < 100 && jobs.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      jobs = (await api.get(`/api/knowledge-bases/${id}/knowledge-base-jobs`)).body.knowledge_base_jobs;
    }
    expect(jobs).to.have.length(1);
    expect(jobs[0].created_by).to.equal('schedule');
    for (let i = 0; i < 300; i++) {
      const job = await api.get(`/api/knowledge-base-jobs/${jobs[0].knowledge_base_job_id}`);
      if (!['QUEUED', 'RUNNING'].includes(job.body.status)) {
        expect(job.body.status, job.text).to.equal('SUCCEEDED');
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const query = await api.post(`/api/knowledge-bases/${id}/query`, { query: 'otters' });
    expect(query.body.entries[0].meta.content).to.equal('a\n\nQUIET WORDS ABOUT OTTERS [checked]');
    expect((await api.delete(`/api/knowledge-bases/${id}`)).status).to.equal(204);
    expect(
      await handle.describe().then(
        () => 'exists',
        (err: Error) => err.constructor.name,
      ),
    ).to.equal('ScheduleNotFoundError');
  });
});

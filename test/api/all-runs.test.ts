// GET /api/runs: the runs of every kind of the caller's organization in one list (the console's Runs page),
// newest first, filtered by kind, status, resource, creator and creation window, paged by the server; and the
// console's static build at /console (strict CSP, pages served as the app, nothing outside the build).
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities/run';
import { CONSOLE_CSP } from '../../src/api/console/serve-console';
import { as, request } from '../harness/client';
import { structureWithoutBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

describe('GET /api/runs', () => {
  let key: string;
  let structureId: string;
  let assistantId: string;
  const ids: Record<string, string> = {};
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);

  before(async () => {
    const tenant = await newTenant('all-runs');
    key = tenant.key;
    const other = await newTenant('all-runs-other');
    const org = tenant.organizationId;
    structureId = await structureWithoutBuild(org);
    const [functionId, toolId] = [
      await structureWithoutBuild(org, 'function'),
      await structureWithoutBuild(org, 'tool'),
    ];
    const assistant = await as(key).post('/api/assistants', { name: 'helper' });
    expect(assistant.status, assistant.text).to.equal(201);
    assistantId = assistant.body.assistant_id;
    const foreignStructure = await structureWithoutBuild(other.organizationId);
    const rows: Array<[string, Run]> = [
      [
        'structure',
        aRun({ kind: 'structure', organization_id: org, resource_id: structureId, status: 'SUCCEEDED' }, at(50)),
      ],
      ['function', aRun({ kind: 'function', organization_id: org, resource_id: functionId, status: 'FAILED' }, at(40))],
      [
        'assistant',
        aRun(
          {
            kind: 'assistant',
            organization_id: org,
            assistant_id: assistantId,
            status: 'RUNNING',
            created_by: 'key-2',
          },
          at(30),
        ),
      ],
      ['tool', aRun({ kind: 'tool', organization_id: org, resource_id: toolId, status: 'QUEUED' }, at(20))],
      [
        'structure2',
        aRun({ kind: 'structure', organization_id: org, resource_id: structureId, status: 'CANCELLED' }, at(10)),
      ],
      [
        'foreign',
        aRun(
          {
            kind: 'structure',
            organization_id: other.organizationId,
            resource_id: foreignStructure,
            status: 'SUCCEEDED',
          },
          at(5),
        ),
      ],
    ];
    for (const [name, run] of rows) ids[name] = run.run_id;
    await getStack()
      .ds.getRepository(Run)
      .save(rows.map(([, run]) => run));
  });

  const list = async (query: string) => {
    const res = await as(key).get(`/api/runs${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body as { runs: Array<{ run_id: string; kind: string; workflow_id: string }>; pagination: any };
  };
  const names = (runs: Array<{ run_id: string }>) =>
    runs.map((r) => Object.keys(ids).find((name) => ids[name] === r.run_id));

  it("lists every kind of the organization's runs, newest first, with the workflow id; never another's", async () => {
    const { runs, pagination } = await list('');
    expect(names(runs)).to.deep.equal(['structure2', 'tool', 'assistant', 'function', 'structure']);
    expect(pagination).to.include({ total_count: 5, page_number: 1 });
    expect(runs[1]).to.include({ kind: 'tool', workflow_id: `tool-run-${ids.tool}` });
  });

  it('filters by kind, status, resource (structure or assistant), creator and creation window', async () => {
    expect(names((await list('?kind=structure,tool')).runs)).to.deep.equal(['structure2', 'tool', 'structure']);
    expect(names((await list('?status=RUNNING&status=QUEUED')).runs)).to.deep.equal(['tool', 'assistant']);
    expect(names((await list(`?resource_id=${structureId}`)).runs)).to.deep.equal(['structure2', 'structure']);
    expect(names((await list(`?resource_id=${assistantId}`)).runs)).to.deep.equal(['assistant']);
    expect(names((await list('?created_by=key-2')).runs)).to.deep.equal(['assistant']);
    const window = `?created_after=${at(45).toISOString()}&created_before=${at(15).toISOString()}`;
    expect(names((await list(window)).runs)).to.deep.equal(['tool', 'assistant', 'function']);
    expect(names((await list(`?kind=structure&resource_id=${structureId}&status=SUCCEEDED`)).runs)).to.deep.equal([
      'structure',
    ]);
  });

  it('pages on the server', async () => {
    const second = await list('?page=2&page_size=2');
    expect(names(second.runs)).to.deep.equal(['assistant', 'function']);
    expect(second.pagination).to.include({ total_count: 5, total_pages: 3, page_number: 2 });
  });

  it('refuses an unknown kind or a malformed time, and a missing key', async () => {
    expect((await as(key).get('/api/runs?kind=deployment')).status).to.equal(400);
    expect((await as(key).get('/api/runs?created_after=yesterday')).status).to.equal(400);
    expect((await request('GET', '/api/runs')).status).to.equal(401);
  });
});

describe('the console at /console', () => {
  it('serves its pages under a strict Content-Security-Policy, and only files of its build', async () => {
    for (const page of ['/console', '/console/runs', '/console/runs/structure/x']) {
      const res = await request('GET', page);
      expect(res.status, page).to.equal(200);
      expect(res.headers.get('content-type')).to.include('text/html');
      expect(res.headers.get('content-security-policy')).to.equal(CONSOLE_CSP);
      expect(res.text).to.include('<div id="root">');
    }
    const html = (await request('GET', '/console')).text;
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1];
    const asset = await request('GET', script);
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('cache-control')).to.include('immutable');
    expect((await request('GET', '/console/assets/missing.js')).status).to.equal(404);
    expect((await request('GET', '/console/assets/%2e%2e/%2e%2e/package.json')).status).to.equal(404);
    expect((await request('POST', '/console')).status).to.equal(404);
  });
});

// Structures, functions and tools through the api: CRUD, validation against the spec's bounds, references
// (secrets, buckets) of the caller's organization only, pagination, isolation and cascading deletes.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { runAlive, SLEEP_PROGRAM } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { waitForDeployment } from '../fixtures/projects';

const KINDS = [
  { kind: 'structure', configMember: 'structure_config_file' },
  { kind: 'function', configMember: 'function_config_file' },
  { kind: 'tool', configMember: 'tool_config_file' },
] as const;

describe('structures, functions and tools', () => {
  for (const { kind, configMember } of KINDS) {
    const base = `/api/${kind}s`;
    const idOf = (body: any) => body[`${kind}_id`];

    it(`${kind}s: create, get, list, update and delete; each create deploys`, async function () {
      this.timeout(60_000);
      const t = await newTenant(`crud-${kind}`);
      const api = as(t.key);
      const secret = await api.post('/api/secrets', { name: 'TOKEN', value: 'hush' });
      const created = await api.post(base, {
        name: 'first',
        env_vars: [
          { name: 'PLAIN', value: '1' },
          { name: 'TOKEN', value: secret.body.secret_id, source: 'SECRET_REF' },
        ],
      });
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.include({
        name: 'first',
        description: '',
        organization_id: t.organizationId,
        created_by: t.userId,
      });
      expect(created.body.code).to.deep.equal({ default: {} });
      expect(created.body.env_vars).to.deep.equal([
        { name: 'PLAIN', value: '1', source: 'manual' },
        { name: 'TOKEN', value: secret.body.secret_id, source: 'secret_ref' },
      ]);
      expect(created.body).to.not.have.property(configMember);
      expect('webhook_enabled' in created.body).to.equal(kind === 'structure');
      const deployment = await waitForDeployment(t.key, created.body.latest_deployment_id);
      expect(deployment, JSON.stringify(deployment)).to.include({
        status: 'SUCCEEDED',
        [`${kind}_id`]: idOf(created.body),
      });

      const id = idOf(created.body);
      expect((await api.get(`${base}/${id}`)).body).to.deep.equal(created.body);

      // A PATCH without code or config file changes fields only; one with them deploys again.
      const renamed = await api.patch(`${base}/${id}`, { name: 'renamed', description: 'd' });
      expect(renamed.status, renamed.text).to.equal(200);
      expect(renamed.body).to.include({
        name: 'renamed',
        description: 'd',
        latest_deployment_id: created.body.latest_deployment_id,
      });
      expect(Date.parse(renamed.body.updated_at)).to.be.greaterThan(Date.parse(created.body.updated_at));
      const redeployed = await api.patch(`${base}/${id}`, { code: { default: {} }, [configMember]: 'custom.yaml' });
      expect(redeployed.body[configMember]).to.equal('custom.yaml');
      expect(redeployed.body.latest_deployment_id).to.not.equal(created.body.latest_deployment_id);
      // With `default` code the default config file is used whatever the resource names.
      expect((await waitForDeployment(t.key, redeployed.body.latest_deployment_id)).status).to.equal('SUCCEEDED');

      const second = await api.post(base, { name: 'second', description: 'x'.repeat(200) });
      const page1 = await api.get(`${base}?page=1&page_size=1`);
      expect(page1.body[`${kind}s`].map(idOf)).to.deep.equal([idOf(second.body)]);
      expect(page1.body.pagination).to.include({
        page_number: 1,
        page_size: 1,
        total_count: 2,
        total_pages: 2,
        next_page: 2,
      });
      const page2 = await api.get(`${base}?page=2&page_size=1`);
      expect(page2.body[`${kind}s`].map(idOf)).to.deep.equal([id]);

      const deleted = await api.delete(`${base}/${id}`);
      expect(deleted.status).to.equal(204);
      expect(deleted.text).to.equal('');
      expect((await api.get(`${base}/${id}`)).status).to.equal(404);
      expect(
        (await api.get(`/api/deployments/${created.body.latest_deployment_id}`)).status,
        'deployments go with it',
      ).to.equal(404);
      expect((await api.get(`${base}/${id}/deployments`)).status).to.equal(404);
      expect((await api.delete(`${base}/${id}`)).status).to.equal(404);
    });
  }

  it('validates bodies against the spec bounds and the code location shape', async () => {
    const t = await newTenant('validate');
    const api = as(t.key);
    const bucket = await api.post('/api/buckets', { name: 'b' });
    const long = 'x'.repeat(201);
    const bad: Array<[string, unknown, string]> = [
      ['no name', {}, '/body/name'],
      ['empty name', { name: '' }, '/body/name'],
      ['long name', { name: long }, '/body/name'],
      ['empty description', { name: 'n', description: '' }, '/body/description'],
      ['long description', { name: 'n', description: long }, '/body/description'],
      ['long config file', { name: 'n', structure_config_file: long }, '/body/structure_config_file'],
      ['empty code', { name: 'n', code: {} }, '/body/code'],
      [
        'two code members',
        { name: 'n', code: { default: {}, data_lake: { bucket_id: bucket.body.bucket_id, asset_path: 'a.zip' } } },
        '/body/code',
      ],
      [
        'unknown code member',
        { name: 'n', code: { gitlab: { owner: 'o', name: 'r', push: { branch: 'main' } } } },
        '/body/code',
      ],
      [
        'codehost without push',
        { name: 'n', code: { codehost: { owner: 'o', name: 'r' } } },
        '/body/code/codehost/push',
      ],
      [
        'long owner',
        { name: 'n', code: { codehost: { owner: long, name: 'r', push: { branch: 'main' } } } },
        '/body/code/codehost/owner',
      ],
      [
        'owner with a slash',
        { name: 'n', code: { codehost: { owner: 'a/b', name: 'r', push: { branch: 'main' } } } },
        '/body/code/codehost/owner',
      ],
      [
        'long branch',
        { name: 'n', code: { codehost: { owner: 'o', name: 'r', push: { branch: long } } } },
        '/body/code/codehost/push/branch',
      ],
      [
        'long tag',
        { name: 'n', code: { codehost: { owner: 'o', name: 'r', push: { branch: 'b', tag: long } } } },
        '/body/code/codehost/push/tag',
      ],
      [
        'both words for the code host',
        {
          name: 'n',
          code: {
            codehost: { owner: 'o', name: 'r', push: { branch: 'b' } },
            github: { owner: 'o', name: 'r', push: { branch: 'b' } },
          },
        },
        '/body/code',
      ],
      ['github without push', { name: 'n', code: { github: { owner: 'o', name: 'r' } } }, '/body/code/github/push'],
      [
        'bad bucket id',
        { name: 'n', code: { data_lake: { bucket_id: 'nope', asset_path: 'a' } } },
        '/body/code/data_lake/bucket_id',
      ],
      [
        'traversing asset path',
        { name: 'n', code: { data_lake: { bucket_id: bucket.body.bucket_id, asset_path: '../a.zip' } } },
        '/body/code/data_lake/asset_path',
      ],
      ['bad env var name', { name: 'n', env_vars: [{ name: '1X', value: 'v' }] }, '/body/env_vars/0/name'],
      [
        'bad env var source',
        { name: 'n', env_vars: [{ name: 'X', value: 'v', source: 'vault' }] },
        '/body/env_vars/0/source',
      ],
      [
        'secret_ref not a uuid',
        { name: 'n', env_vars: [{ name: 'X', value: '', source: 'SECRET_REF' }] },
        '/body/env_vars/0/value',
      ],
    ];
    for (const [what, body, path] of bad) {
      const res = await api.post('/api/structures', body);
      expect(res.status, `${what}: ${res.text}`).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
      expect(
        res.body.errors.map((e: any) => e.path),
        what,
      ).to.include(path);
    }
    // Well-formed references to records the organization does not have: 409, like a foreign key violation.
    const missing: Array<[string, unknown, string]> = [
      [
        'unknown bucket',
        { name: 'n', code: { data_lake: { bucket_id: randomUUID(), asset_path: 'a.zip' } } },
        '/body/code/data_lake/bucket_id',
      ],
      [
        'unknown secret',
        { name: 'n', env_vars: [{ name: 'X', value: randomUUID(), source: 'secret_ref' }] },
        '/body/env_vars/0/value',
      ],
    ];
    for (const [what, body, path] of missing) {
      const res = await api.post('/api/structures', body);
      expect(res.status, `${what}: ${res.text}`).to.equal(409);
      expect(
        res.body.errors.map((e: any) => e.path),
        what,
      ).to.include(path);
    }
    const ok = await api.post('/api/structures', {
      name: 'x'.repeat(200),
      description: 'x'.repeat(200),
      structure_config_file: 'x'.repeat(200),
      webhook_enabled: true,
      code: {
        codehost: { owner: 'o'.repeat(200), name: 'r', push: { branch: 'b'.repeat(200), tag: 't'.repeat(200) } },
      },
    });
    expect(ok.status, ok.text).to.equal(201);
    expect(ok.body.webhook_enabled).to.equal(true);
    const patched = await api.patch(`/api/structures/${ok.body.structure_id}`, { name: '' });
    expect(patched.status).to.equal(400);
    expect((await api.get('/api/structures/not-a-uuid')).status).to.equal(400);
    expect((await api.get(`/api/structures/${randomUUID()}`)).status).to.equal(404);
  });

  it("another organization's ids are not found, and references to its secrets and buckets are refused", async () => {
    const a = await newTenant('owner');
    const b = await newTenant('other');
    const secretA = await as(a.key).post('/api/secrets', { name: 'S', value: 'v' });
    const bucketA = await as(a.key).post('/api/buckets', { name: 'b' });
    const fn = await as(a.key).post('/api/functions', { name: 'f' });
    const apiB = as(b.key);
    expect((await apiB.get(`/api/functions/${fn.body.function_id}`)).status).to.equal(404);
    expect((await apiB.get(`/api/structures/${fn.body.function_id}`)).status, 'a function is not a structure').to.equal(
      404,
    );
    expect((await as(a.key).get(`/api/structures/${fn.body.function_id}`)).status, 'not even for its owner').to.equal(
      404,
    );
    expect((await apiB.get(`/api/deployments/${fn.body.latest_deployment_id}`)).status).to.equal(404);
    expect((await apiB.get('/api/functions')).body.functions).to.deep.equal([]);
    const withSecret = await apiB.post('/api/tools', {
      name: 't',
      env_vars: [{ name: 'S', value: secretA.body.secret_id, source: 'secret_ref' }],
    });
    expect(withSecret.status).to.equal(409);
    const withBucket = await apiB.post('/api/tools', {
      name: 't',
      code: { data_lake: { bucket_id: bucketA.body.bucket_id, asset_path: 'a.zip' } },
    });
    expect(withBucket.status).to.equal(409);
  });

  it('stops the open runs of a structure it deletes: their processes are gone', async function () {
    this.timeout(60_000);
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const created = await api.post(`/api/structures/${s.structureId}/runs`, { args: ['600'] });
    expect(created.status, created.text).to.equal(201);
    const runId = created.body.structure_run_id;
    let pid = 0;
    for (let i = 0; i < 400 && !pid; i++) {
      const logs = (await api.get(`/api/structure-runs/${runId}/logs`)).body.logs as string[] | undefined;
      pid = Number(logs?.[0]?.split(' ')[1] ?? 0);
      if (!pid) await new Promise((r) => setTimeout(r, 50));
    }
    expect(runAlive(runId)).to.equal(true);

    expect((await api.delete(`/api/structures/${s.structureId}`)).status).to.equal(204);
    const deadline = Date.now() + 5_000;
    while (runAlive(runId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(runAlive(runId)).to.equal(false);
    expect((await api.get(`/api/structure-runs/${runId}`)).status).to.equal(404);
    const rows: unknown[] = await getStack().ds.query(`SELECT 1 FROM runs WHERE run_id = $1`, [runId]);
    expect(rows).to.have.length(0);
    // The workflow ended too (its CANCELLED write found no row, which is harmless).
    const handle = getStack().env.client.workflow.getHandle(`structure-run-${runId}`);
    const wfDeadline = Date.now() + 10_000;
    let status = (await handle.describe()).status.name;
    while (status === 'RUNNING' && Date.now() < wfDeadline) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await handle.describe()).status.name;
    }
    expect(status).to.not.equal('RUNNING');
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createApiKey } from '../../src/services/accounts/accounts';
import { as, request } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';

describe('users, API keys and organizations', () => {
  it('lists the users of the organization with a new key', async () => {
    const t = await newTenant();
    const res = await as(t.key).get('/api/users');
    expect(res.status).to.equal(200);
    expect(res.body.users).to.have.length(1);
    expect(res.body.users[0]).to.include({ user_id: t.userId, email: t.email });
    expect(res.body.users[0].organizations).to.deep.equal([t.organizationId]);
  });

  it('refuses requests without a valid key with 401 {type, errors}', async () => {
    for (const key of [undefined, 'tmk_nope']) {
      const res = await as(key).get('/api/users');
      expect(res.status).to.equal(401);
      expect(res.body.type).to.equal('UnauthorizedError');
      expect(res.body.errors[0].message).to.be.a('string');
    }
    const malformed = await request('GET', '/api/users', undefined, { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).to.equal(401);
  });

  it('creates user keys whose value is shown once, and deactivated or deleted keys stop working', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const created = await api.post(`/api/users/${t.userId}/api-keys`, { name: 'ci' });
    expect(created.status).to.equal(201);
    expect(created.body.value).to.match(/^tmk_/);
    expect(created.body.name).to.equal('ci');

    const second = as(created.body.value);
    expect((await second.get('/api/users')).status).to.equal(200);

    const fetched = await api.get(`/api/api-keys/${created.body.api_key_id}`);
    expect(fetched.status).to.equal(200);
    expect(fetched.body).to.not.have.property('value');

    const listed = await api.get(`/api/users/${t.userId}/api-keys?page=1&page_size=1`);
    expect(listed.body.pagination).to.include({
      page_number: 1,
      page_size: 1,
      total_count: 2,
      total_pages: 2,
      next_page: 2,
    });
    expect(listed.body.api_keys[0]).to.not.have.property('value');

    const renamed = await api.patch(`/api/api-keys/${created.body.api_key_id}`, { name: 'renamed' });
    expect(renamed.body.name).to.equal('renamed');

    await api.patch(`/api/api-keys/${created.body.api_key_id}`, { active: false });
    expect((await second.get('/api/users')).status).to.equal(401);
    await api.patch(`/api/api-keys/${created.body.api_key_id}`, { active: true });
    expect((await second.get('/api/users')).status).to.equal(200);

    expect((await api.delete(`/api/api-keys/${created.body.api_key_id}`)).status).to.equal(204);
    expect((await second.get('/api/users')).status).to.equal(401);
    expect((await api.get(`/api/api-keys/${created.body.api_key_id}`)).status).to.equal(404);
  });

  it('stops a key deactivated or deleted outside this api process within a second (cached keys are dropped by NOTIFY)', async () => {
    const t = await newTenant();
    const { ds } = getStack();
    const created = await as(t.key).post(`/api/users/${t.userId}/api-keys`, { name: 'elsewhere' });
    const other = as(created.body.value);
    const untilRefused = async () => {
      const deadline = Date.now() + 1000;
      let status = 0;
      while (Date.now() < deadline && (status = (await other.get('/api/users')).status) !== 401)
        await new Promise((r) => setTimeout(r, 20));
      return status;
    };
    for (let i = 0; i < 3; i++) expect((await other.get('/api/users')).status).to.equal(200); // cached now

    // As another api process, the worker (a run's credential) or a cascade would: straight in the table.
    await ds.query(`UPDATE api_keys SET active = false WHERE api_key_id = $1`, [created.body.api_key_id]);
    expect(await untilRefused()).to.equal(401);
    await ds.query(`UPDATE api_keys SET active = true WHERE api_key_id = $1`, [created.body.api_key_id]);
    expect((await other.get('/api/users')).status).to.equal(200);
    await ds.query(`DELETE FROM api_keys WHERE api_key_id = $1`, [created.body.api_key_id]);
    expect(await untilRefused()).to.equal(401);
  });

  it("hides a run's own credential: never listed, and 404 to read, change or delete", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const { ds } = getStack();
    const resourceId = randomUUID();
    const runId = randomUUID();
    await ds.query(
      `INSERT INTO code_resources (resource_id, kind, organization_id, name, description, code, env_vars, created_by)
       VALUES ($1, 'structure', $2, 's', '', '{"default":{}}', '[]', 'test')`,
      [resourceId, t.organizationId],
    );
    await ds.query(
      `INSERT INTO runs (run_id, kind, organization_id, resource_id, status, created_by) VALUES ($1, 'structure', $2, $3, 'RUNNING', 'test')`,
      [runId, t.organizationId, resourceId],
    );
    const { key: runKey } = await createApiKey(ds, {
      organizationId: t.organizationId,
      userId: t.userId,
      name: `run ${runId}`,
      createdBy: 'test',
      runId,
    });

    const byUser = await api.get(`/api/users/${t.userId}/api-keys`);
    expect(byUser.status).to.equal(200);
    expect(byUser.body.api_keys.map((k: { api_key_id: string }) => k.api_key_id)).to.not.include(runKey.api_key_id);
    expect(byUser.body.pagination.total_count).to.equal(1);
    const byOrg = await api.get(`/api/organizations/${t.organizationId}/api-keys`);
    expect(byOrg.body.api_keys.map((k: { api_key_id: string }) => k.api_key_id)).to.not.include(runKey.api_key_id);
    expect(byOrg.body.pagination.total_count).to.equal(1);

    for (const res of [
      await api.get(`/api/api-keys/${runKey.api_key_id}`),
      await api.patch(`/api/api-keys/${runKey.api_key_id}`, { active: false }),
      await api.delete(`/api/api-keys/${runKey.api_key_id}`),
    ]) {
      expect(res.status).to.equal(404);
      expect(res.body.type).to.equal('NotFoundError');
    }
    const stored: Array<{ active: boolean }> = await ds.query(`SELECT active FROM api_keys WHERE api_key_id = $1`, [
      runKey.api_key_id,
    ]);
    expect(stored).to.deep.equal([{ active: true }]);
  });

  it('creates organization keys and lists every key of the organization', async () => {
    const t = await newTenant();
    const api = as(t.key);
    // Listing every key needs an admin (docs/people.md#roles): the organization key is made one.
    const orgKey = await api.post(`/api/organizations/${t.organizationId}/api-keys`, {
      name: 'deploy bot',
      role: 'admin',
    });
    expect(orgKey.status).to.equal(201);
    expect(orgKey.body).to.include({ user_id: null, role: 'admin' });
    const all = await as(orgKey.body.value).get(`/api/organizations/${t.organizationId}/api-keys`);
    expect(all.body.api_keys.map((k: { name: string }) => k.name).sort()).to.deep.equal(['deploy bot', 'test key']);
  });

  it('shows the caller its organizations and their members', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const orgs = await api.get('/api/organizations');
    expect(orgs.body.organizations.map((o: { organization_id: string }) => o.organization_id)).to.deep.equal([
      t.organizationId,
    ]);
    const org = await api.get(`/api/organizations/${t.organizationId}`);
    expect(org.body).to.include({ organization_id: t.organizationId, entitlement: 'FREE', description: '' });
    // Every organization has a default bucket, created with it, which cannot be deleted.
    const bucket = await api.get(`/api/buckets/${org.body.default_bucket_id}`);
    expect(bucket.body).to.include({ name: 'default', organization_id: t.organizationId });
    const refused = await api.delete(`/api/buckets/${org.body.default_bucket_id}`);
    expect(refused.status, refused.text).to.equal(409);
    expect(refused.body.type).to.equal('ConflictError');
    expect((await api.get(`/api/buckets/${org.body.default_bucket_id}`)).status).to.equal(200);
    const users = await api.get(`/api/organizations/${t.organizationId}/users`);
    expect(users.body.users.map((u: { email: string }) => u.email)).to.deep.equal([t.email]);
  });

  it('validates input: bad uuids, bounds, types and pagination give 400 ValidationError', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const badId = await api.get('/api/api-keys/not-a-uuid');
    expect(badId.status).to.equal(400);
    expect(badId.body.type).to.equal('ValidationError');
    expect(badId.body.errors[0].path).to.equal('/path/api_key_id');

    const longName = await api.post(`/api/users/${t.userId}/api-keys`, { name: 'x'.repeat(201) });
    expect(longName.status).to.equal(400);
    expect((await api.post(`/api/users/${t.userId}/api-keys`, { name: '' })).status).to.equal(400);
    expect((await api.post(`/api/users/${t.userId}/api-keys`, { name: 5 })).status).to.equal(400);
    expect((await api.post(`/api/users/${t.userId}/api-keys`)).status).to.equal(400);
    const malformed = await api.post(`/api/users/${t.userId}/api-keys`, undefined, {
      raw: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).to.equal(400);
    expect(malformed.body.errors[0].message).to.match(/not valid JSON/);
    const wrongType = await api.post(`/api/users/${t.userId}/api-keys`, undefined, {
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(wrongType.status).to.equal(415);
    expect((await api.get('/api/secrets?page=0')).status).to.equal(400);
    expect((await api.get('/api/secrets?page_size=101')).status).to.equal(400);
    expect((await api.get('/api/secrets?page=abc')).status).to.equal(400);

    const unknownField = await api.post(`/api/users/${t.userId}/api-keys`, { name: 'ok', surprise: true });
    expect(unknownField.status).to.equal(201);
  });

  it('answers unknown routes with 404 NotFoundError', async () => {
    const t = await newTenant();
    const res = await as(t.key).get('/api/nothing-here');
    expect(res.status).to.equal(404);
    expect(res.body.type).to.equal('NotFoundError');
  });
});

// What a self-hosted organization reads about itself: the configured models, its usage per day, and its
// members (removing one deletes their keys of the organization).
import { expect } from 'chai';
import { createApiKey } from '../../src/services/accounts/accounts';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';

describe('models, usage and members', function () {
  this.timeout(120_000);

  it('lists the configured chat and embedding models with their provider and capabilities; they are read-only', async () => {
    const api = as((await newTenant('models')).key);
    const list = await api.get('/api/models');
    expect(list.status, list.text).to.equal(200);
    expect(list.body.models.map((m: any) => [m.model_name, m.model_type, m.provider, m.default])).to.deep.equal([
      ['local/test-model', 'chat', 'local', true],
      ['local/test-embedding', 'embedding', 'local', true],
    ]);
    expect(list.body.models[0].capabilities).to.include('text');
    expect(list.body.pagination).to.include({ total_count: 2 });
    const embedding = await api.get('/api/models?model_type=embedding');
    expect(embedding.body.models.map((m: any) => m.model_name)).to.deep.equal(['local/test-embedding']);
    const one = await api.get(`/api/models/${list.body.models[0].model_config_id}`);
    expect(one.status, one.text).to.equal(200);
    expect(one.body).to.deep.equal(list.body.models[0]);
    expect((await api.get('/api/models/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await api.post('/api/models', { model_name: 'x' })).status).to.equal(405);
  });

  it('reports usage per UTC day: run time and tokens of runs, bytes ingested, retrieval queries', async () => {
    const t = await newTenant('usage');
    const api = as(t.key);
    const { ds } = getStack();
    // Records as the platform writes them: a finished chat run with its usage, a knowledge base job.
    const kb = await api.post('/api/knowledge-bases', {
      name: 'kb',
      type: 'gtc_pg_vector',
      config: { gtc_pg_vector: {} },
    });
    expect(kb.status, kb.text).to.equal(201);
    const day = '2026-03-04';
    await ds.query(
      `INSERT INTO runs (run_id, kind, organization_id, status, args, env_vars, created_by, created_at, updated_at,
                         started_at, completed_at, usage)
       VALUES (gen_random_uuid(), 'chat', $1, 'SUCCEEDED', '[]', '[]', 'test', $2, $2, $2,
               $2::timestamptz + interval '90 seconds', '{"input_tokens": 12, "output_tokens": 5}')`,
      [t.organizationId, `${day}T10:00:00Z`],
    );
    await ds.query(
      `INSERT INTO knowledge_base_jobs (knowledge_base_job_id, knowledge_base_id, organization_id, status,
                                        bytes_ingested, created_by, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, 'SUCCEEDED', 2048, 'test', $3, $3)`,
      [kb.body.knowledge_base_id, t.organizationId, `${day}T23:59:00Z`],
    );
    const usage = await api.get(`/api/usage?start_date=2026-03-03&end_date=${day}`);
    expect(usage.status, usage.text).to.equal(200);
    expect(usage.body).to.include({
      usage_period_start: '2026-03-03T00:00:00.000Z',
      usage_period_end: '2026-03-05T00:00:00.000Z',
      runtime_seconds: 90,
      input_tokens: 12,
      output_tokens: 5,
      bytes_ingested: 2048,
      rag_queries: 0,
      runtime_seconds_limit: -1,
    });
    expect(usage.body.days).to.deep.equal([
      { date: '2026-03-03', runtime_seconds: 0, input_tokens: 0, output_tokens: 0, bytes_ingested: 0, rag_queries: 0 },
      { date: day, runtime_seconds: 90, input_tokens: 12, output_tokens: 5, bytes_ingested: 2048, rag_queries: 0 },
    ]);
    // The current month by default; another organization sees none of it.
    const current = await api.get('/api/usage');
    expect(current.status, current.text).to.equal(200);
    expect(current.body.days.length).to.be.within(28, 31);
    const other = await as((await newTenant('usage-other')).key).get(`/api/usage?start_date=${day}&end_date=${day}`);
    expect(other.body.runtime_seconds).to.equal(0);
    for (const bad of [
      'start_date=2026-03-05&end_date=2026-03-04',
      'start_date=2020-01-01&end_date=2026-01-01',
      'start_date=x',
    ]) {
      const res = await api.get(`/api/usage?${bad}`);
      expect(res.status, `${bad}: ${res.text}`).to.equal(400);
    }
  });

  it('removes a member and their keys of the organization; never the last member', async () => {
    const org = await newTenant('members');
    const person = await newTenant('member');
    const api = as(org.key);
    const invite = await api.post(`/api/organizations/${org.organizationId}/invites`, { email: person.email });
    const accepted = await as(person.key).post(`/api/invites/${invite.body.invite_id}/response`, {
      response: 'ACCEPTED',
    });
    expect(accepted.status, accepted.text).to.equal(204);
    const users = await api.get(`/api/organizations/${org.organizationId}/users`);
    expect(users.body.users.map((u: any) => u.user_id).sort()).to.deep.equal([org.userId, person.userId].sort());
    const { value: personKeyInOrg } = await createApiKey(getStack().ds, {
      organizationId: org.organizationId,
      userId: person.userId,
      name: 'person in org',
      createdBy: person.userId,
    });
    expect((await as(personKeyInOrg).get('/api/secrets')).status).to.equal(200);

    // Only members of the key's own organization, and only of it.
    const foreign = await as(person.key).delete(`/api/organizations/${org.organizationId}/users/${org.userId}`);
    expect(foreign.status).to.equal(404);
    const removed = await api.delete(`/api/organizations/${org.organizationId}/users/${person.userId}`);
    expect(removed.status, removed.text).to.equal(204);
    expect((await as(personKeyInOrg).get('/api/secrets')).status).to.equal(401);
    expect((await as(person.key).get('/api/secrets')).status).to.equal(200);
    const after = await api.get(`/api/organizations/${org.organizationId}/users`);
    expect(after.body.users.map((u: any) => u.user_id)).to.deep.equal([org.userId]);
    const again = await api.delete(`/api/organizations/${org.organizationId}/users/${person.userId}`);
    expect(again.status).to.equal(404);
    const last = await api.delete(`/api/organizations/${org.organizationId}/users/${org.userId}`);
    expect(last.status, last.text).to.equal(409);
    expect(last.body.type).to.equal('ConflictError');
  });
});

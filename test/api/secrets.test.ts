import { expect } from 'chai';
import { Secret } from '../../src/persistence/entities';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';

describe('secrets', () => {
  it('stores values encrypted at rest and never returns them', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const value = 'sk-live-very-secret-value-1234567890';
    const created = await api.post('/api/secrets', { name: 'OPENAI_API_KEY', value });
    expect(created.status).to.equal(201);
    // Never used yet: its creation time (clients require a timestamp); a run's use moves it (runs.test.ts).
    expect(created.body).to.include({
      name: 'OPENAI_API_KEY',
      organization_id: t.organizationId,
      last_used: created.body.created_at,
    });
    const id = created.body.secret_id;

    for (const res of [created, await api.get(`/api/secrets/${id}`), await api.get('/api/secrets')]) {
      expect(res.text).to.not.include(value);
      expect(res.text).to.not.include('value');
    }

    const row = await getStack().ds.getRepository(Secret).findOneByOrFail({ secret_id: id });
    expect(row.value_encrypted.includes(Buffer.from(value))).to.equal(false);
    expect(getStack().box.open(row.value_encrypted, id)).to.equal(value);
    expect(() => getStack().box.open(row.value_encrypted, 'another-id')).to.throw();

    const updated = await api.patch(`/api/secrets/${id}`, { name: 'RENAMED', value: 'new value' });
    expect(updated.status).to.equal(200);
    expect(updated.body.name).to.equal('RENAMED');
    const again = await getStack().ds.getRepository(Secret).findOneByOrFail({ secret_id: id });
    expect(getStack().box.open(again.value_encrypted, id)).to.equal('new value');

    expect((await api.delete(`/api/secrets/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/secrets/${id}`)).status).to.equal(404);
  });

  it('enforces unique names per organization and bounds', async () => {
    const t = await newTenant();
    const api = as(t.key);
    expect((await api.post('/api/secrets', { name: 'A', value: 'x' })).status).to.equal(201);
    const dup = await api.post('/api/secrets', { name: 'A', value: 'y' });
    expect(dup.status).to.equal(409);
    expect(dup.body.type).to.equal('ConflictError');
    const other = await newTenant();
    expect((await as(other.key).post('/api/secrets', { name: 'A', value: 'x' })).status).to.equal(201);
    expect((await api.post('/api/secrets', { name: 'x'.repeat(201), value: 'x' })).status).to.equal(400);
    expect((await api.post('/api/secrets', { name: 'B' })).status).to.equal(400);
    expect((await api.post('/api/secrets', { name: 'B', value: '' })).status).to.equal(400);
    const list = await api.get('/api/secrets?page_size=1');
    expect(list.body.pagination).to.include({ total_count: 1, total_pages: 1, page_size: 1 });
  });

  it('refuses bodies over the JSON limit with 413', async () => {
    const t = await newTenant();
    const big = 'x'.repeat(getStack().config.maxJsonBodyBytes + 10);
    const res = await as(t.key).post('/api/secrets', { name: 'big', value: big });
    expect(res.status).to.equal(413);
    expect(res.body.type).to.equal('PayloadTooLargeError');
  });
});

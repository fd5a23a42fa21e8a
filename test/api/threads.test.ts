import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { appendThreadMessage, threadExchanges } from '../../src/services/conversations/threads';
import { as } from '../support/client';
import { getStack, newTenant } from '../support/stack';

const exchange = (i: number) => ({ input: `q${i}`, output: `a${i}` });

describe('threads and messages', () => {
  it('creates a thread with messages, counts them, and reads them in order', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const created = await api.post('/api/threads', {
      name: 'chat',
      alias: 'support-1',
      metadata: { user: 'u1' },
      messages: [
        { input: 'héllo', output: 'hi', metadata: { run_id: 'r1' } },
        { input: 'bye', output: '👋' },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({
      name: 'chat',
      alias: 'support-1',
      message_count: 2,
      messages_length: 5 + 2 + 3 + 1,
      organization_id: t.organizationId,
      created_by: t.userId,
    });
    expect(created.body.metadata).to.deep.equal({ user: 'u1' });
    const id = created.body.thread_id;
    expect((await api.get(`/api/threads/${id}`)).body).to.deep.equal(created.body);

    const messages = await api.get(`/api/threads/${id}/messages`);
    expect(messages.status).to.equal(200);
    expect(messages.body.messages.map((m: any) => [m.index, m.input, m.output])).to.deep.equal([
      [0, 'héllo', 'hi'],
      [1, 'bye', '👋'],
    ]);
    expect(messages.body.messages[0]).to.include({
      thread_id: id,
      organization_id: t.organizationId,
      created_by: t.userId,
    });
    expect(messages.body.messages[0].metadata).to.deep.equal({ run_id: 'r1' });
    expect(messages.body.messages[1].metadata).to.deep.equal({});
    expect(messages.body.pagination).to.include({ page_size: 1000, total_count: 2 });

    // A name alone (what the griptape assistant driver sends).
    const bare = await api.post('/api/threads', { name: randomUUID().replace(/-/g, '') });
    expect(bare.body).to.include({ alias: null, message_count: 0, messages_length: 0 });
    expect(bare.body.metadata).to.deep.equal({});

    expect((await api.delete(`/api/threads/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/threads/${id}`)).status).to.equal(404);
    expect((await api.get(`/api/threads/${id}/messages`)).status).to.equal(404);
    expect((await api.get(`/api/messages/${messages.body.messages[0].message_id}`)).status).to.equal(404);
  });

  it('filters threads by alias, starts_with (name or alias) and created_by; aliases are unique per organization', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const a = (await api.post('/api/threads', { name: 'alpha one', alias: 'x-1' })).body;
    const b = (await api.post('/api/threads', { name: 'beta', alias: 'alpha_2' })).body;
    const c = (await api.post('/api/threads', { name: '100% sure' })).body;
    const orgKey = (await api.post(`/api/organizations/${t.organizationId}/api-keys`, { name: 'org' })).body;
    const d = (await as(orgKey.value).post('/api/threads', { name: 'by org key' })).body;
    const ids = async (q: string) => (await api.get(`/api/threads${q}`)).body.threads.map((x: any) => x.thread_id);

    expect(await ids('')).to.deep.equal([d.thread_id, c.thread_id, b.thread_id, a.thread_id]);
    expect(await ids('?alias=x-1')).to.deep.equal([a.thread_id]);
    expect(await ids('?alias=x')).to.deep.equal([]);
    expect(await ids('?starts_with=alpha')).to.deep.equal([b.thread_id, a.thread_id]);
    expect(await ids('?starts_with=alpha_')).to.deep.equal([b.thread_id]);
    expect(await ids(`?starts_with=${encodeURIComponent('100%')}`)).to.deep.equal([c.thread_id]);
    expect(await ids('?starts_with=1%25%25')).to.deep.equal([], 'LIKE wildcards are literal');
    expect(await ids(`?created_by=${t.userId}`)).to.deep.equal([c.thread_id, b.thread_id, a.thread_id]);
    expect(await ids(`?created_by=${d.created_by}&starts_with=by`)).to.deep.equal([d.thread_id]);
    const paged = await api.get('/api/threads?page=2&page_size=3');
    expect(paged.body.threads.map((x: any) => x.thread_id)).to.deep.equal([a.thread_id]);
    expect(paged.body.pagination).to.include({ total_count: 4, total_pages: 2 });

    const dup = await api.post('/api/threads', { name: 'again', alias: 'x-1' });
    expect(dup.status).to.equal(409);
    expect(dup.body.type).to.equal('ConflictError');
    expect(dup.body.errors[0].message).to.include('x-1');
    expect((await api.patch(`/api/threads/${b.thread_id}`, { alias: 'x-1' })).status).to.equal(409);
    expect((await as((await newTenant()).key).post('/api/threads', { name: 'n', alias: 'x-1' })).status).to.equal(201);
    expect((await api.patch(`/api/threads/${a.thread_id}`, { alias: null })).body.alias).to.equal(null);
    expect((await api.patch(`/api/threads/${b.thread_id}`, { alias: 'x-1', name: 'renamed' })).body).to.include({
      alias: 'x-1',
      name: 'renamed',
    });
  });

  it('PATCH with messages replaces all of them; without, keeps them', async () => {
    const api = as((await newTenant()).key);
    const id = (await api.post('/api/threads', { name: 't', messages: [exchange(0), exchange(1), exchange(2)] })).body
      .thread_id;
    const before = (await api.get(`/api/threads/${id}/messages`)).body.messages;

    const renamed = await api.patch(`/api/threads/${id}`, { name: 'renamed', metadata: { m: 1 } });
    expect(renamed.body).to.include({ name: 'renamed', message_count: 3 });
    expect(renamed.body.metadata).to.deep.equal({ m: 1 });

    // What the griptape conversation-memory driver sends: the whole conversation, extra keys included.
    const replaced = await api.patch(`/api/threads/${id}`, {
      messages: [
        { input: 'new0', output: 'out0', metadata: { run_id: 'a' }, extra: 1 },
        { input: 'new1', output: 'out1' },
      ],
    });
    expect(replaced.status, replaced.text).to.equal(200);
    expect(replaced.body).to.include({ name: 'renamed', message_count: 2, messages_length: 16 });
    expect(replaced.body.metadata).to.deep.equal({ m: 1 });
    const after = (await api.get(`/api/threads/${id}/messages`)).body.messages;
    expect(after.map((m: any) => [m.index, m.input])).to.deep.equal([
      [0, 'new0'],
      [1, 'new1'],
    ]);
    expect((await api.get(`/api/messages/${before[0].message_id}`)).status, 'replaced messages are gone').to.equal(404);

    const emptied = await api.patch(`/api/threads/${id}`, { messages: [] });
    expect(emptied.body).to.include({ message_count: 0, messages_length: 0 });
    expect((await api.get(`/api/threads/${id}/messages`)).body.messages).to.deep.equal([]);
  });

  it('appends messages, updates them in place, and renumbers after a delete', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const id = (await api.post('/api/threads', { name: 't', messages: [exchange(0)] })).body.thread_id;
    const posted = [];
    for (const i of [1, 2, 3]) {
      const res = await api.post(`/api/threads/${id}/messages`, { ...exchange(i), metadata: { i } });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ thread_id: id, index: i, input: `q${i}`, output: `a${i}` });
      posted.push(res.body);
    }
    const one = posted[0];
    expect((await api.get(`/api/messages/${one.message_id}`)).body).to.deep.equal(one);
    const edited = await api.patch(`/api/messages/${one.message_id}`, { output: 'better', metadata: { edited: true } });
    expect(edited.body).to.include({ index: 1, input: 'q1', output: 'better' });
    expect(edited.body.metadata).to.deep.equal({ edited: true });

    expect((await api.delete(`/api/messages/${one.message_id}`)).status).to.equal(204);
    const list = (await api.get(`/api/threads/${id}/messages`)).body.messages;
    expect(list.map((m: any) => [m.index, m.input])).to.deep.equal([
      [0, 'q0'],
      [1, 'q2'],
      [2, 'q3'],
    ]);
    expect((await api.get(`/api/messages/${posted[2].message_id}`)).body.index).to.equal(2);
    const next = await api.post(`/api/threads/${id}/messages`, exchange(4));
    expect(next.body.index).to.equal(3);
    expect((await api.delete(`/api/messages/${one.message_id}`)).status).to.equal(404);

    const paged = await api.get(`/api/threads/${id}/messages?page=2&page_size=3`);
    expect(paged.body.messages.map((m: any) => m.index)).to.deep.equal([3]);
    expect(await threadExchanges(getStack().ds, id)).to.deep.equal([
      { input: 'q0', output: 'a0' },
      { input: 'q2', output: 'a2' },
      { input: 'q3', output: 'a3' },
      { input: 'q4', output: 'a4' },
    ]);
  });

  it('gives concurrent appends distinct, consecutive indexes', async function () {
    this.timeout(60_000);
    const t = await newTenant();
    const api = as(t.key);
    const id = (await api.post('/api/threads', { name: 't' })).body.thread_id;
    const { ds } = getStack();
    const replies = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => api.post(`/api/threads/${id}/messages`, exchange(i))),
      // The service as the assistant run uses it, inside its own transactions.
      ...Array.from({ length: 5 }, (_, i) =>
        ds.transaction((em) =>
          appendThreadMessage(em, t.organizationId, id, { input: `s${i}`, output: 'o', createdBy: 'run' }),
        ),
      ),
    ]);
    const indexes = replies.map((r: any) => ('status' in r ? r.body.index : r.index)).sort((a, b) => a - b);
    expect(indexes).to.deep.equal(Array.from({ length: 25 }, (_, i) => i));
    const list = (await api.get(`/api/threads/${id}/messages`)).body;
    expect(list.messages.map((m: any) => m.index)).to.deep.equal(indexes);
    expect((await api.get(`/api/threads/${id}`)).body.message_count).to.equal(25);
  });

  it('answers 404 for unknown or foreign ids and 400 for bad bodies', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const foreign = as((await newTenant()).key);
    const id = (await api.post('/api/threads', { name: 't', messages: [exchange(0)] })).body.thread_id;
    const messageId = (await api.get(`/api/threads/${id}/messages`)).body.messages[0].message_id;
    for (const res of [
      await foreign.get(`/api/threads/${id}`),
      await foreign.patch(`/api/threads/${id}`, { name: 'x' }),
      await foreign.post(`/api/threads/${id}/messages`, exchange(1)),
      await foreign.get(`/api/threads/${id}/messages`),
      await foreign.patch(`/api/messages/${messageId}`, { input: 'x' }),
      await foreign.delete(`/api/messages/${messageId}`),
      await foreign.delete(`/api/threads/${id}`),
      await api.post(`/api/threads/${randomUUID()}/messages`, exchange(1)),
    ]) {
      expect(res.status, res.text).to.equal(404);
      expect(res.body.type).to.equal('NotFoundError');
    }
    let err: any;
    await getStack()
      .ds.transaction((em) => appendThreadMessage(em, randomUUID(), id, { input: 'i', output: 'o', createdBy: 'x' }))
      .catch((e) => (err = e));
    expect(err?.status).to.equal(404);
    expect((await api.get(`/api/threads/${id}`)).body.message_count).to.equal(1);

    const cases: Array<[string, string, unknown, string]> = [
      ['post', '/api/threads', {}, '/body/name'],
      ['post', '/api/threads', { name: 'x', alias: '' }, '/body/alias'],
      ['post', '/api/threads', { name: 'x', messages: [{ input: 'i' }] }, '/body/messages/0/output'],
      ['post', '/api/threads', { name: 'x', messages: [{ input: 'i', output: 5 }] }, '/body/messages/0/output'],
      [
        'post',
        '/api/threads',
        { name: 'x', messages: Array.from({ length: 1001 }, () => ({ input: '', output: '' })) },
        '/body/messages',
      ],
      [
        'post',
        '/api/threads',
        { name: 'x', messages: [exchange(0), { input: 'a\u0000', output: '' }] },
        '/body/messages/1/input',
      ],
      ['patch', `/api/threads/${id}`, { metadata: 'x' }, '/body/metadata'],
      ['patch', `/api/threads/${id}`, { messages: {} }, '/body/messages'],
      ['post', `/api/threads/${id}/messages`, { input: 'x' }, '/body/output'],
      ['patch', `/api/messages/${messageId}`, { metadata: { k: 'a\u0000' } }, '/body/metadata/k'],
    ];
    for (const [method, path, body, where] of cases) {
      const res = await (api as any)[method](path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body).slice(0, 60)}`).to.equal(400);
      expect(
        res.body.errors.map((e: any) => e.path),
        res.text.slice(0, 300),
      ).to.include(where);
    }
    expect((await api.get('/api/threads/nope')).status).to.equal(400);
    expect((await api.get('/api/messages/nope')).status).to.equal(400);
    expect((await api.get(`/api/threads/${id}/messages?page_size=1001`)).status).to.equal(400);
    expect((await api.get(`/api/threads/${id}/messages`)).body.messages.map((m: any) => m.input)).to.deep.equal(['q0']);
  });
});

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { assertRulesetsExist, rulesetInstructions } from '../../src/services/assistants/rulesets';
import { as } from '../support/client';
import { getStack, newTenant } from '../support/stack';

describe('rules and rulesets', () => {
  it('creates, reads, updates and deletes rules', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const created = await api.post('/api/rules', { name: 'tone', rule: 'Be concise.', metadata: { team: 'docs' } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({
      name: 'tone',
      rule: 'Be concise.',
      organization_id: t.organizationId,
      created_by: t.userId,
    });
    expect(created.body.metadata).to.deep.equal({ team: 'docs' });
    const id = created.body.rule_id;

    expect((await api.get(`/api/rules/${id}`)).body).to.deep.equal(created.body);
    const patched = await api.patch(`/api/rules/${id}`, { rule: 'Be brief.', metadata: { v: 2 } });
    expect(patched.status).to.equal(200);
    expect(patched.body).to.include({ name: 'tone', rule: 'Be brief.' });
    expect(patched.body.metadata).to.deep.equal({ v: 2 });
    expect(Date.parse(patched.body.updated_at)).to.be.at.least(Date.parse(created.body.updated_at));

    const defaults = await api.post('/api/rules', { name: 'n', rule: 'r' });
    expect(defaults.body.metadata).to.deep.equal({});
    const list = await api.get('/api/rules');
    expect(list.body.rules.map((r: any) => r.rule_id)).to.deep.equal([defaults.body.rule_id, id]);
    expect(list.body.pagination).to.include({ total_count: 2, page_size: 100 });

    expect((await api.delete(`/api/rules/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/rules/${id}`)).status).to.equal(404);
    expect((await api.delete(`/api/rules/${id}`)).status).to.equal(404);
  });

  it('refuses bad rule bodies with 400 and a path', async () => {
    const api = as((await newTenant()).key);
    const cases: Array<[unknown, string]> = [
      [{ rule: 'x' }, '/body/name'],
      [{ name: 'x' }, '/body/rule'],
      [{ name: '', rule: 'x' }, '/body/name'],
      [{ name: 'x'.repeat(201), rule: 'x' }, '/body/name'],
      [{ name: 'x', rule: 'x'.repeat(2001) }, '/body/rule'],
      [{ name: 'x', rule: 'x', metadata: [] }, '/body/metadata'],
      [{ name: 'x', rule: 'a\u0000b' }, '/body/rule'],
      [{ name: 'x', rule: 'x', metadata: { big: 'x'.repeat(70_000) } }, '/body/metadata'],
    ];
    for (const [body, path] of cases) {
      const res = await api.post('/api/rules', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
      expect(res.body.errors.map((e: any) => e.path)).to.include(path);
    }
    expect((await api.post('/api/rules', { name: 'x', rule: 'x'.repeat(2000) })).status).to.equal(201);
    expect((await api.get('/api/rules/not-a-uuid')).status).to.equal(400);
    expect((await api.get(`/api/rules/${randomUUID()}`)).status).to.equal(404);
  });

  it("keeps a ruleset's rules in order, replaces them on PATCH, and loses deleted rules", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const rule = async (text: string) =>
      (await api.post('/api/rules', { name: text, rule: text })).body.rule_id as string;
    const [r1, r2, r3] = [await rule('one'), await rule('two'), await rule('three')];

    const created = await api.post('/api/rulesets', {
      name: 'Style',
      alias: 'style',
      rule_ids: [r3, r1, r2],
      metadata: { k: 1 },
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({
      name: 'Style',
      alias: 'style',
      description: '',
      organization_id: t.organizationId,
    });
    expect(created.body.rule_ids).to.deep.equal([r3, r1, r2]);
    const id = created.body.ruleset_id;
    expect((await api.get(`/api/rulesets/${id}`)).body.rule_ids).to.deep.equal([r3, r1, r2]);

    // The rules of a ruleset, in its order (what the griptape ruleset driver reads).
    const rules = await api.get(`/api/rules?ruleset_id=${id}`);
    expect(rules.body.rules.map((r: any) => r.rule)).to.deep.equal(['three', 'one', 'two']);
    const page2 = await api.get(`/api/rules?ruleset_id=${id}&page=2&page_size=2`);
    expect(page2.body.rules.map((r: any) => r.rule)).to.deep.equal(['two']);
    expect(page2.body.pagination).to.include({ total_count: 3, total_pages: 2, previous_page: 1 });

    const patched = await api.patch(`/api/rulesets/${id}`, { rule_ids: [r2, r3], description: 'house style' });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.include({ name: 'Style', alias: 'style', description: 'house style' });
    expect(patched.body.rule_ids).to.deep.equal([r2, r3]);
    expect(patched.body.metadata).to.deep.equal({ k: 1 });

    // A rule in two rulesets; deleting it removes it from both, the others keep their order.
    const other = await api.post('/api/rulesets', { name: 'Other', rule_ids: [r3, r1] });
    expect((await api.delete(`/api/rules/${r3}`)).status).to.equal(204);
    expect((await api.get(`/api/rulesets/${id}`)).body.rule_ids).to.deep.equal([r2]);
    expect((await api.get(`/api/rulesets/${other.body.ruleset_id}`)).body.rule_ids).to.deep.equal([r1]);

    // Services the assistant run uses: the given order, unknown ids skipped.
    const { ds } = getStack();
    const instructions = await rulesetInstructions(ds, t.organizationId, [other.body.ruleset_id, randomUUID(), id]);
    expect(instructions).to.deep.equal([
      { ruleset_id: other.body.ruleset_id, name: 'Other', rules: ['one'] },
      { ruleset_id: id, name: 'Style', rules: ['two'] },
    ]);
    expect(await rulesetInstructions(ds, (await newTenant()).organizationId, [id])).to.deep.equal([]);

    expect((await api.patch(`/api/rulesets/${id}`, { rule_ids: [] })).body.rule_ids).to.deep.equal([]);
    expect((await api.get(`/api/rules?ruleset_id=${id}`)).body.rules).to.deep.equal([]);
    expect((await api.delete(`/api/rulesets/${id}`)).status).to.equal(204);
    expect((await api.get(`/api/rulesets/${id}`)).status).to.equal(404);
    expect((await api.get(`/api/rules/${r2}`)).status, 'rules outlive their rulesets').to.equal(200);
    expect((await api.get(`/api/rules?ruleset_id=${id}`)).status).to.equal(404);
  });

  it('finds rulesets by alias, refuses taken aliases, and foreign or unknown rule ids, with 409', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const a = await api.post('/api/rulesets', { name: 'A', alias: 'support bot' });
    await api.post('/api/rulesets', { name: 'B' });
    const found = await api.get(`/api/rulesets?alias=${encodeURIComponent('support bot')}`);
    expect(found.body.rulesets.map((r: any) => r.ruleset_id)).to.deep.equal([a.body.ruleset_id]);
    expect((await api.get('/api/rulesets?alias=support')).body.rulesets).to.deep.equal([]);
    expect((await api.get('/api/rulesets')).body.pagination.total_count).to.equal(2);

    const dup = await api.post('/api/rulesets', { name: 'C', alias: 'support bot' });
    expect(dup.status).to.equal(409);
    expect(dup.body.type).to.equal('ConflictError');
    expect(dup.body.errors[0].message).to.include('support bot');
    const b = (await api.get('/api/rulesets')).body.rulesets.find((r: any) => r.name === 'B');
    expect((await api.patch(`/api/rulesets/${b.ruleset_id}`, { alias: 'support bot' })).status).to.equal(409);
    // Clearing an alias frees it; another organization may use it.
    expect((await api.patch(`/api/rulesets/${a.body.ruleset_id}`, { alias: null })).body.alias).to.equal(null);
    expect((await api.patch(`/api/rulesets/${b.ruleset_id}`, { alias: 'support bot' })).status).to.equal(200);
    expect(
      (await as((await newTenant()).key).post('/api/rulesets', { name: 'A', alias: 'support bot' })).status,
    ).to.equal(201);

    const mine = (await api.post('/api/rules', { name: 'r', rule: 'r' })).body.rule_id;
    const foreign = (await as((await newTenant()).key).post('/api/rules', { name: 'r', rule: 'r' })).body.rule_id;
    const missing = randomUUID();
    const bad = await api.post('/api/rulesets', { name: 'D', rule_ids: [mine, foreign, missing] });
    expect(bad.status).to.equal(409);
    expect(bad.body.type).to.equal('ConflictError');
    expect(bad.body.errors).to.deep.equal([
      { message: `Rule ${foreign} not found`, path: '/body/rule_ids/1' },
      { message: `Rule ${missing} not found`, path: '/body/rule_ids/2' },
    ]);
    expect((await api.get('/api/rulesets?alias=D')).body.rulesets).to.have.length(0);
    expect((await api.patch(`/api/rulesets/${b.ruleset_id}`, { rule_ids: [foreign] })).status).to.equal(409);
    expect((await api.get(`/api/rules?ruleset_id=${randomUUID()}`)).status).to.equal(404);

    for (const body of [
      {},
      { name: 'x', rule_ids: [mine, mine] },
      { name: 'x', rule_ids: ['nope'] },
      { name: 'x', alias: '' },
      { name: 'x', description: 5 },
    ]) {
      const res = await api.post('/api/rulesets', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }

    let err: any;
    await assertRulesetsExist(getStack().ds, { organizationId: t.organizationId } as any, [
      a.body.ruleset_id,
      missing,
    ]).catch((e) => (err = e));
    expect(err?.status).to.equal(409);
    expect(err.errors).to.deep.equal([{ message: `Ruleset ${missing} not found`, path: '/body/ruleset_ids/1' }]);
  });
});

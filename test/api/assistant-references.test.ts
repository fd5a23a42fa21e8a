// What an assistant names, through HTTP: every id list of CreateAssistant and UpdateAssistant is validated alike
// (a 400 naming the member, never a 500), and deleting a ruleset, tool, structure or retriever removes it from
// the assistants that name it, so their runs go on instead of answering 409. Knowledge bases:
// knowledge-base-full-text.test.ts.
import { expect } from 'chai';
import { structureWithoutBuild } from '../harness/builds';
import { as } from '../harness/client';
import { TERMINAL } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

const ID_LISTS = ['knowledge_base_ids', 'retriever_ids', 'ruleset_ids', 'structure_ids', 'tool_ids'];

describe('assistants: the records they name', function () {
  this.timeout(60_000);

  it('validates every id list of CreateAssistant and UpdateAssistant alike: 400 naming the member', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const assistant = await api.post('/api/assistants', { name: 'a' });
    expect(assistant.status, assistant.text).to.equal(201);
    const path = `/api/assistants/${assistant.body.assistant_id}`;
    for (const list of ID_LISTS) {
      for (const bad of [['not-a-uuid'], 'not-a-list', [42]]) {
        const created = await api.post('/api/assistants', { name: 'b', [list]: bad });
        const updated = await api.patch(path, { [list]: bad });
        for (const [op, res] of [
          ['CreateAssistant', created],
          ['UpdateAssistant', updated],
        ] as const) {
          expect(res.status, `${op} ${list}=${JSON.stringify(bad)}: ${res.text}`).to.equal(400);
          expect(res.body.type).to.equal('ValidationError');
          expect(res.body.errors[0].path, `${op} ${list}`).to.match(new RegExp(`^/body/${list}(/0)?$`));
        }
      }
    }
    // retriever_ids, which the interface leaves out of UpdateAssistant, is taken like the others.
    const retriever = await api.post('/api/retrievers', { name: 'r' });
    const patched = await api.patch(path, { retriever_ids: [retriever.body.retriever_id] });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.retriever_ids).to.deep.equal([retriever.body.retriever_id]);
  });

  it('deleting a ruleset, tool, structure or retriever removes it from every assistant; their runs still start', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const rule = await api.post('/api/rules', { name: 'r', rule: 'Be brief.' });
    const ruleset = (await api.post('/api/rulesets', { name: 'Brief', rule_ids: [rule.body.rule_id] })).body.ruleset_id;
    const kept = (await api.post('/api/rulesets', { name: 'Kept' })).body.ruleset_id;
    const tool = await structureWithoutBuild(t.organizationId, 'tool');
    const structure = await structureWithoutBuild(t.organizationId);
    const retriever = (await api.post('/api/retrievers', { name: 'r' })).body.retriever_id;
    const names = {
      ruleset_ids: [ruleset, kept],
      tool_ids: [tool],
      structure_ids: [structure],
      retriever_ids: [retriever],
    };
    const first = await api.post('/api/assistants', { name: 'one', ...names });
    const second = await api.post('/api/assistants', { name: 'two', ...names });
    expect([first.status, second.status], first.text).to.deep.equal([201, 201]);

    expect((await api.delete(`/api/rulesets/${ruleset}`)).status).to.equal(204);
    for (const a of [first, second]) {
      const got = await api.get(`/api/assistants/${a.body.assistant_id}`);
      expect(got.body.ruleset_ids).to.deep.equal([kept]);
      expect(Date.parse(got.body.updated_at)).to.be.greaterThan(Date.parse(a.body.updated_at));
    }
    expect((await api.delete(`/api/tools/${tool}`)).status).to.equal(204);
    expect((await api.delete(`/api/structures/${structure}`)).status).to.equal(204);
    expect((await api.delete(`/api/retrievers/${retriever}`)).status).to.equal(204);
    const left = (await api.get(`/api/assistants/${first.body.assistant_id}`)).body;
    expect(left).to.deep.include({ ruleset_ids: [kept], tool_ids: [], structure_ids: [], retriever_ids: [] });

    // A run of the assistant starts (no 409 for what was deleted) and ends as its model answers.
    const model = provider.uniqueModel();
    provider.script({ model, text: 'Done.' });
    const run = await api.post(`/api/assistants/${first.body.assistant_id}/runs`, {
      input: 'hi',
      model: `local/${model}`,
    });
    expect(run.status, run.text).to.equal(201);
    expect(run.body).to.deep.include({ ruleset_ids: [kept], tool_ids: [], structure_ids: [], retriever_ids: [] });
    const deadline = Date.now() + 30_000;
    let status = run.body.status as string;
    while (!TERMINAL.includes(status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await api.get(`/api/assistant-runs/${run.body.assistant_run_id}`)).body.status;
    }
    expect(status).to.equal('SUCCEEDED');
  });
});

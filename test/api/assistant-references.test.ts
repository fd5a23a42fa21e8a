// What an assistant names, through HTTP: every id list of CreateAssistant and UpdateAssistant is validated alike
// (a 400 naming the member, never a 500).
import { expect } from 'chai';
import { as } from '../harness/client';
import { newTenant } from '../harness/stack';

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
});

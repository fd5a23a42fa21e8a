// The wire of both run event streams (structure runs, assistant runs) as the interface's clients read it:
// line by line, every `data:` line decoded strictly as a full EventDetail with the run's id. The end of a
// stream is a comment (`: end <STATUS>`) before the close; the `event: end` frame only with `?end_event=true`.
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { EVENTS_PROGRAM } from '../harness/runs';
import { strictEventDetails } from '../harness/sse';
import { getStack, newTenant } from '../harness/stack';

/** The whole body of a stream, read to its close. */
async function rawStream(path: string, key: string): Promise<string> {
  const res = await fetch(`${getStack().baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
  return res.text();
}

const endFrame = (status: string) =>
  `event: end\ndata: ${JSON.stringify({ status, type: 'StreamEnd', origin: 'SYSTEM', payload: { status } })}\n\n`;

describe('run event streams on the wire: every data line an EventDetail', function () {
  this.timeout(60_000);

  it('structure runs: live and after the end, every data line is an EventDetail of the run; the end a comment', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': EVENTS_PROGRAM } });
    const created = await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['3', '0.1'] });
    expect(created.status, created.text).to.equal(201);
    const runId = created.body.structure_run_id as string;
    const path = `/api/structure-runs/${runId}/events/stream`;

    const live = await rawStream(path, t.key); // opened while the run runs, read to its close
    const events = strictEventDetails(live, 'structure_run_id', runId);
    const listed = (await as(t.key).get(`/api/structure-runs/${runId}/events?limit=100`)).body.events;
    expect(events).to.deep.equal(listed);
    expect(events.at(-1).type).to.equal('StructureRunCompleted');
    expect(live.endsWith('\n\n: end SUCCEEDED\n\n'), live.slice(-200)).to.equal(true);
    expect(live).to.not.match(/^event:/m);

    // After the end: the same; with ?end_event=true the end frame comes before the end comment.
    expect(strictEventDetails(await rawStream(path, t.key), 'structure_run_id', runId)).to.deep.equal(listed);
    const asked = await rawStream(`${path}?end_event=true`, t.key);
    expect(asked.endsWith(`\n\n${endFrame('SUCCEEDED')}: end SUCCEEDED\n\n`), asked.slice(-300)).to.equal(true);
    expect(() => strictEventDetails(asked, 'structure_run_id', runId)).to.throw(/not an EventDetail/);
    const resumed = await rawStream(`${path}?last_event_id=${listed.length}`, t.key);
    expect(strictEventDetails(resumed, 'structure_run_id', runId)).to.deep.equal([]);
    expect(resumed.endsWith(': end SUCCEEDED\n\n')).to.equal(true);
    expect((await as(t.key).get(`${path}?end_event=yes`)).status).to.equal(400);
  });

  it('assistant runs: every data line (chunks included) is an EventDetail of the run; the end a comment', async () => {
    const { modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    provider.script({ model, chunks: ['one ', 'two'], chunkDelayMs: 20 });
    const assistant = await api.post('/api/assistants', { name: 'Wire' });
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'Count',
      stream: true,
      model: `local/${model}`,
    });
    expect(created.status, created.text).to.equal(201);
    const runId = created.body.assistant_run_id as string;
    const path = `/api/assistant-runs/${runId}/events/stream`;

    const live = await rawStream(path, t.key);
    const events = strictEventDetails(live, 'assistant_run_id', runId);
    expect(events.filter((e) => e.type === 'TextChunkEvent')).to.have.length(2);
    expect(events.at(-1).type).to.equal('StructureRunCompleted');
    const listed = (await api.get(`/api/assistant-runs/${runId}/events?limit=100`)).body.events;
    expect(events).to.deep.equal(listed);
    expect(live.endsWith('\n\n: end SUCCEEDED\n\n'), live.slice(-200)).to.equal(true);
    expect(live).to.not.match(/^event:/m);

    const asked = await rawStream(`${path}?end_event=true`, t.key);
    expect(asked.endsWith(`\n\n${endFrame('SUCCEEDED')}: end SUCCEEDED\n\n`), asked.slice(-300)).to.equal(true);
  });
});

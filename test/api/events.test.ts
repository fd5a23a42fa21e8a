// Structure run events: CreateEvents (three body shapes), offset lists, GetEvent, run credentials, and the
// SSE stream (to EOF; interrupted and resumed on a second api process).
import { expect } from 'chai';
import { createApiKey } from '../../src/services/accounts/accounts';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { EVENTS_PROGRAM, SLEEP_PROGRAM, waitForRun } from '../harness/runs';
import { readSse } from '../harness/sse';
import { getStack, newTenant, startApi } from '../harness/stack';

async function startRun(
  key: string,
  organizationId: string,
  program: string,
  args: string[],
  opts: { untilRunning?: boolean } = {},
) {
  const s = await structureWithBuild(organizationId, { files: { 'structure.py': program } });
  const created = await as(key).post(`/api/structures/${s.structureId}/runs`, { args });
  expect(created.status, created.text).to.equal(201);
  const runId = created.body.structure_run_id as string;
  if (opts.untilRunning) await waitForRun(key, runId, (r) => r.status === 'RUNNING');
  return runId;
}

async function allEvents(key: string, runId: string) {
  return (await as(key).get(`/api/structure-runs/${runId}/events?limit=1000`)).body.events as any[];
}

describe('structure run events', function () {
  this.timeout(60_000);

  it('accepts one event, a list and {events}; lists them with limit/offset; reads one; refuses once the run ended', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const runId = await startRun(t.key, t.organizationId, SLEEP_PROGRAM, ['600'], { untilRunning: true });
    const path = `/api/structure-runs/${runId}/events`;

    const single = await api.post(path, { type: 'UserEvent', payload: { n: 1 }, timestamp: 1.25 });
    expect(single.status, single.text).to.equal(202);
    expect(single.text).to.equal('');
    expect(
      (
        await api.post(path, [
          { type: 'A', payload: 'two', timestamp: 2 },
          { type: 'B', timestamp: 3 },
        ])
      ).status,
    ).to.equal(202);
    expect((await api.post(path, { events: [{ type: 'C', payload: [4], timestamp: 4 }] })).status).to.equal(202);

    for (const bad of [
      {},
      { payload: { n: 1 }, timestamp: 1 },
      { type: '', timestamp: 1 },
      { type: 'x'.repeat(201), timestamp: 1 },
      { timestamp: 'now' },
      [],
      { events: [] },
      Array.from({ length: 1001 }, () => ({ type: 'A', timestamp: 1 })),
      'text',
      { events: [{ type: 'A', timestamp: 1 }], type: 'A', timestamp: 1 },
    ]) {
      const res = await api.post(path, bad);
      expect(res.status, JSON.stringify(bad).slice(0, 80)).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
    }

    const user = (await allEvents(t.key, runId)).filter((e) => e.origin === 'USER');
    expect(user.map((e) => [e.type, e.payload, e.timestamp])).to.deep.equal([
      ['UserEvent', { n: 1 }, 1.25],
      ['A', 'two', 2],
      ['B', null, 3],
      ['C', [4], 4],
    ]);
    expect(user[0]).to.have.keys(
      'event_id',
      'structure_run_id',
      'type',
      'origin',
      'payload',
      'timestamp',
      'created_at',
    );

    // Paging with next_offset visits every event once.
    const total = (await allEvents(t.key, runId)).length;
    const seen: string[] = [];
    for (let offset = 0; ;) {
      const page = await api.get(`${path}?limit=2&offset=${offset}`);
      expect(page.body).to.include({
        limit: 2,
        offset,
        total_count: total,
        count: page.body.events.length,
        next_offset: offset + page.body.events.length,
      });
      if (!page.body.count) break;
      seen.push(...page.body.events.map((e: any) => e.event_id));
      offset = page.body.next_offset;
    }
    expect(seen).to.deep.equal((await allEvents(t.key, runId)).map((e) => e.event_id));
    expect((await api.get(`${path}`)).body.limit).to.equal(100);
    expect((await api.get(`${path}?limit=1001`)).status).to.equal(400);

    const one = await api.get(`/api/events/${user[1].event_id}`);
    expect(one.body).to.deep.equal(user[1]);
    expect((await api.get('/api/events/0b6bd2b1-58a1-4f5c-9a43-d4c0e6a7d1f2')).status).to.equal(404);

    await api.post(`/api/structure-runs/${runId}/cancel`);
    const late = await api.post(path, { type: 'A', timestamp: 5 });
    expect(late.status).to.equal(409);
  });

  it('stores a post once per Idempotency-Key: a retry stores nothing and says it was replayed', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const runId = await startRun(t.key, t.organizationId, SLEEP_PROGRAM, ['600'], { untilRunning: true });
    const path = `/api/structure-runs/${runId}/events`;
    const keyed = (key: string) => ({ headers: { 'Idempotency-Key': key } });
    const event = { type: 'Tick', payload: { i: 0 }, timestamp: 1 };

    const first = await api.post(path, event, keyed('tick-0'));
    expect(first.status, first.text).to.equal(202);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await api.post(path, event, keyed('tick-0'));
    expect(again.status, again.text).to.equal(202);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    const other = await api.post(path, { ...event, payload: { i: 1 } }, keyed('tick-0'));
    expect(other.status, other.text).to.equal(422);
    expect(other.body.type).to.equal('IdempotencyKeyReusedError');
    expect((await api.post(path, { ...event, payload: { i: 1 } }, keyed('tick-1'))).status).to.equal(202);
    expect((await api.post(path, event)).status).to.equal(202); // without a key, every post stores
    expect((await api.post(path, event, keyed(''))).status).to.equal(400);

    // Concurrent repeats (a client retrying before the first answered) store once too.
    const racing = await Promise.all(Array.from({ length: 5 }, () => api.post(path, event, keyed('tick-2'))));
    expect(racing.map((r) => r.status)).to.deep.equal([202, 202, 202, 202, 202]);
    expect(racing.filter((r) => r.headers.get('idempotent-replayed') === 'true')).to.have.length(4);

    const user = (await allEvents(t.key, runId)).filter((e) => e.origin === 'USER');
    expect(user.map((e) => e.payload.i)).to.deep.equal([0, 1, 0, 0]);
    await api.post(`/api/structure-runs/${runId}/cancel`);
  });

  it("lets a run's credential read and post to its own run only", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const runId = await startRun(t.key, t.organizationId, SLEEP_PROGRAM, ['600'], { untilRunning: true });
    const otherRun = await startRun(t.key, t.organizationId, SLEEP_PROGRAM, ['600'], { untilRunning: true });
    const { value } = await createApiKey(getStack().ds, {
      organizationId: t.organizationId,
      userId: null,
      name: 'run key',
      createdBy: 'test',
      runId,
    });
    const runKey = as(value);
    expect((await runKey.get(`/api/structure-runs/${runId}`)).status).to.equal(200);
    expect((await runKey.post(`/api/structure-runs/${runId}/events`, { type: 'A', timestamp: 1 })).status).to.equal(
      202,
    );
    const events = await runKey.get(`/api/structure-runs/${runId}/events`);
    expect(events.status).to.equal(200);
    expect((await runKey.get(`/api/events/${events.body.events[0].event_id}`)).status).to.equal(200);
    for (const res of [
      await runKey.get(`/api/structure-runs/${otherRun}`),
      await runKey.get(`/api/structure-runs/${otherRun}/events`),
      await runKey.post(`/api/structure-runs/${otherRun}/events`, { type: 'A', timestamp: 1 }),
      await runKey.get(`/api/events/${(await allEvents(t.key, otherRun))[0].event_id}`),
      await runKey.post(`/api/structure-runs/${runId}/cancel`),
      await runKey.get(`/api/structure-runs/${runId}/logs`),
      await runKey.get('/api/secrets'),
      await runKey.get(`/api/organizations/${t.organizationId}/api-keys`),
    ]) {
      expect(res.status, res.text).to.equal(403);
      expect(res.body.type).to.equal('ForbiddenError');
    }
    await api.post(`/api/structure-runs/${runId}/cancel`);
    await api.post(`/api/structure-runs/${otherRun}/cancel`);
    expect((await runKey.get(`/api/structure-runs/${runId}`)).status).to.equal(401);
  });

  it('streams every event once, in order, as it happens, then the end comment with the final status, and closes', async () => {
    const t = await newTenant();
    const runId = await startRun(t.key, t.organizationId, EVENTS_PROGRAM, ['5', '0.2']);
    const stream = await readSse(`${getStack().baseUrl}/api/structure-runs/${runId}/events/stream`, t.key);
    expect(stream.status).to.equal(200);
    expect(stream.contentType).to.match(/^text\/event-stream/);
    expect(stream.ended).to.equal(true);
    const listed = await allEvents(t.key, runId);
    expect(stream.frames.map((f) => f.data)).to.deep.equal(listed);
    expect(stream.frames.map((f) => f.id)).to.deep.equal(listed.map((_, i) => i + 1));
    expect(listed.map((e) => e.type)).to.deep.equal([
      'StructureRunStarting',
      'StructureRunRunning',
      'Tick',
      'Tick',
      'Tick',
      'Tick',
      'Tick',
      'StructureRunCompleted',
    ]);
    // Delivered by NOTIFY, not by the 5 s re-check: each frame arrives shortly after its event was stored.
    const delays = stream.frames.map((f) => f.at - Date.parse(f.data.created_at));
    console.log(`      event stored → frame received: at most ${Math.max(...delays)} ms`);
    expect(Math.max(...delays)).to.be.lessThan(1_000);
    expect(stream.comments.filter((c) => c === 'keep-alive').length).to.be.at.least(1);
    // After every event, the end comment with the final status, then the end of the response; no end frame
    // unless asked for.
    expect(stream.end).to.equal('SUCCEEDED');
    expect(stream.endEvent).to.equal(undefined);
    expect(stream.afterEnd).to.equal(0);
    // Asked for (`?end_event=true`): the last frame, `event: end` without an `id` (a resume after it still starts
    // after the last event), then the end comment.
    const end = { status: 'SUCCEEDED', type: 'StreamEnd', origin: 'SYSTEM', payload: { status: 'SUCCEEDED' } };
    const raw = await (
      await fetch(`${getStack().baseUrl}/api/structure-runs/${runId}/events/stream?end_event=true`, {
        headers: { authorization: `Bearer ${t.key}` },
      })
    ).text();
    expect(
      raw.endsWith(`\n\nevent: end\ndata: ${JSON.stringify(end)}\n\n: end SUCCEEDED\n\n`),
      raw.slice(-300),
    ).to.equal(true);
    const again = await readSse(
      `${getStack().baseUrl}/api/structure-runs/${runId}/events/stream?end_event=true`,
      t.key,
      {
        lastEventId: listed.length,
      },
    );
    expect(again.frames).to.deep.equal([]);
    expect(again.endEvent).to.deep.equal(end);
    expect(again.end).to.equal('SUCCEEDED');
    expect(again.afterEnd).to.equal(0);
  });

  it('resumes after Last-Event-ID on a second api process with no gap and no duplicate', async () => {
    const t = await newTenant();
    const first = await startApi(getStack().env.client);
    const second = await startApi(getStack().env.client);
    try {
      const runId = await startRun(t.key, t.organizationId, EVENTS_PROGRAM, ['8', '0.15']);
      const path = `/api/structure-runs/${runId}/events/stream`;
      const before = await readSse(`${first.baseUrl}${path}`, t.key, { stopAfter: 4 });
      expect(before.ended).to.equal(false);
      const lastId = before.frames[before.frames.length - 1].id;
      const after = await readSse(`${second.baseUrl}${path}`, t.key, { lastEventId: lastId });
      expect(after.ended).to.equal(true);
      expect(before.end).to.equal(undefined);
      expect(after.end).to.equal('SUCCEEDED');
      const ids = [...before.frames, ...after.frames].map((f) => f.id);
      const listed = await allEvents(t.key, runId);
      expect(ids).to.deep.equal(listed.map((_, i) => i + 1));
      expect([...before.frames, ...after.frames].map((f) => f.data)).to.deep.equal(listed);
      expect(listed[listed.length - 1].type).to.equal('StructureRunCompleted');
      // The first process dropped the disconnected client's subscription.
      for (let i = 0; i < 50 && first.runUpdates.subscriptionCount; i++) await new Promise((r) => setTimeout(r, 20));
      expect(first.runUpdates.subscriptionCount).to.equal(0);

      // ?last_event_id= on an ended run: the rest at once, then the end.
      const tail = await readSse(`${second.baseUrl}${path}?last_event_id=${listed.length - 2}`, t.key);
      expect(tail.frames.map((f) => f.id)).to.deep.equal([listed.length - 1, listed.length]);
      expect(tail.ended).to.equal(true);
      expect(tail.end).to.equal('SUCCEEDED');
      const bad = await as(t.key).get(path, { headers: { 'last-event-id': 'abc' } });
      expect(bad.status).to.equal(400);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('ends open streams when the api process shuts down, without the end comment', async () => {
    const t = await newTenant();
    const api = await startApi(getStack().env.client);
    const runId = await startRun(t.key, t.organizationId, SLEEP_PROGRAM, ['600'], { untilRunning: true });
    await waitForRun(t.key, runId, (r) => r.status === 'RUNNING');
    const reading = readSse(`${api.baseUrl}/api/structure-runs/${runId}/events/stream`, t.key);
    await new Promise((r) => setTimeout(r, 300));
    expect(api.runUpdates.subscriptionCount).to.equal(1);
    await api.close();
    const stream = await reading;
    expect(stream.frames.map((f) => f.data.type)).to.deep.equal(['StructureRunStarting', 'StructureRunRunning']);
    // Closed, but the run goes on: no end comment (the client resumes elsewhere with Last-Event-ID).
    expect(stream.ended).to.equal(true);
    expect(stream.end).to.equal(undefined);
    await as(t.key).post(`/api/structure-runs/${runId}/cancel`);
  });
});

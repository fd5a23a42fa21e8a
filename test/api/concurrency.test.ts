// Concurrency keys and limits through the public api (docs/run-control.md#concurrency-keys-and-limits): a
// structure's `concurrency` on its record; `queue` holds a key's second run QUEUED (saying why) while another
// key runs, and starts it after the first; `skip` ends the newcomer CANCELLED at once; `cancel_in_progress`
// cancels the running one; the queue endpoint counts per key; a paused queue starts nothing until resumed.
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { SLEEP_PROGRAM, TERMINAL, waitForRun } from '../harness/runs';
import { newTenant } from '../harness/stack';

describe('concurrency keys and limits', function () {
  this.timeout(120_000);

  async function sleeper(concurrency: Record<string, unknown> | null) {
    const t = await newTenant('concurrency');
    const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const client = as(t.key);
    const patched = await client.patch(`/api/structures/${structureId}`, { concurrency });
    expect(patched.status, patched.text).to.equal(200);
    const run = async (seconds: number, key?: string) => {
      const res = await client.post(`/api/structures/${structureId}/runs`, {
        args: [String(seconds)],
        ...(key !== undefined ? { concurrency_key: key } : {}),
      });
      expect(res.status, res.text).to.equal(201);
      return res.body.structure_run_id as string;
    };
    return { t, client, structureId, patched: patched.body, run };
  }

  it('queue: one run per key at a time, other keys unaffected; the queue endpoint counts per key', async () => {
    const s = await sleeper({ limit: 1 });
    expect(s.patched.concurrency).to.deep.equal({ limit: 1, strategy: 'queue' });
    const a1 = await s.run(3, 'a');
    const a2 = await s.run(1, 'a');
    const b1 = await s.run(1, 'b');
    const waiting = await waitForRun(
      s.t.key,
      a2,
      (r) => r.status_detail?.waiting_for === 'key' || TERMINAL.includes(r.status),
    );
    expect(waiting.status).to.equal('QUEUED');
    expect(waiting.concurrency_key).to.equal('a');
    expect(waiting.status_detail.message).to.include('concurrency key "a"');
    const bEnd = await waitForRun(s.t.key, b1);
    expect(bEnd.status, 'key b is not held up by key a').to.equal('SUCCEEDED');
    const queue = await s.client.get(`/api/structures/${s.structureId}/queue`);
    expect(queue.status, queue.text).to.equal(200);
    expect(queue.body).to.deep.include({ paused: false, running: 1, queued: 1, total_limit: null });
    expect(queue.body.keys).to.deep.equal([{ key: 'a', running: 1, queued: 1, limit: 1 }]);
    const [first, second] = [await waitForRun(s.t.key, a1), await waitForRun(s.t.key, a2)];
    expect([first.status, second.status]).to.deep.equal(['SUCCEEDED', 'SUCCEEDED']);
    expect(Date.parse(second.started_at)).to.be.at.least(Date.parse(first.completed_at));
  });

  it('skip: a run of a key at its limit ends CANCELLED at once, saying why', async () => {
    const s = await sleeper({ limit: 1, strategy: 'skip' });
    const first = await s.run(30, 'k');
    await waitForRun(s.t.key, first, (r) => r.status === 'RUNNING');
    const skipped = await waitForRun(s.t.key, await s.run(1, 'k'));
    expect(skipped.status).to.equal('CANCELLED');
    expect(skipped.started_at).to.equal(null);
    expect(skipped.status_detail.message).to.include('strategy skip');
    const other = await waitForRun(s.t.key, await s.run(1, 'other'));
    expect(other.status, 'another key is not skipped').to.equal('SUCCEEDED');
    await s.client.post(`/api/structure-runs/${first}/cancel`, {});
  });

  it('cancel_in_progress: the new run cancels the running one of its key and runs', async () => {
    const s = await sleeper({ limit: 1, strategy: 'cancel_in_progress', key: 'all' });
    const first = await s.run(60);
    await waitForRun(s.t.key, first, (r) => r.status === 'RUNNING');
    const second = await s.run(1);
    const cancelled = await waitForRun(s.t.key, first);
    expect(cancelled.status).to.equal('CANCELLED');
    expect(cancelled.status_detail.message).to.include(`superseded by run ${second}`);
    const secondEnd = await waitForRun(s.t.key, second);
    expect(secondEnd.status).to.equal('SUCCEEDED');
    expect(Date.parse(secondEnd.started_at)).to.be.at.least(Date.parse(cancelled.completed_at));
  });

  it('a paused queue starts nothing (runs wait QUEUED, saying so) until it is resumed', async () => {
    const s = await sleeper(null);
    const paused = await s.client.post(`/api/structures/${s.structureId}/queue/pause`, {});
    expect(paused.status, paused.text).to.equal(200);
    expect(paused.body.paused).to.equal(true);
    const run = await s.run(0);
    const waiting = await waitForRun(
      s.t.key,
      run,
      (r) => r.status_detail?.waiting_for === 'paused' || TERMINAL.includes(r.status),
    );
    expect(waiting.status).to.equal('QUEUED');
    const queue = await s.client.get(`/api/structures/${s.structureId}/queue`);
    expect(queue.body.keys).to.deep.equal([{ key: null, running: 0, queued: 1, limit: null }]);
    const resumed = await s.client.post(`/api/structures/${s.structureId}/queue/resume`, {});
    expect(resumed.body.paused).to.equal(false);
    expect((await waitForRun(s.t.key, run)).status).to.equal('SUCCEEDED');
  });

  it('executing a function whose queue is paused answers 202 with the QUEUED run at once, not after its wait', async () => {
    const t = await newTenant('paused-execute');
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': 'def handler(event):\n    return {"got": event["body"]}\n' },
      mainFile: 'main.py',
    });
    const client = as(t.key);
    expect((await client.post(`/api/functions/${fn.structureId}/queue/pause`, {})).status).to.equal(200);
    const started = Date.now();
    const held = await client.post(`/api/functions/${fn.structureId}/execute`, { n: 1 });
    // FUNCTION_EXECUTE_TIMEOUT_SECONDS is 60 by default: well under it.
    expect(Date.now() - started).to.be.below(20_000);
    expect(held.status, held.text).to.equal(202);
    expect(held.body).to.include({ status: 'QUEUED' });
    expect(held.body.status_detail.waiting_for).to.equal('paused');
    await client.post(`/api/functions/${fn.structureId}/queue/resume`, {});
    const runPath = `/api/function-runs/${held.body.function_run_id}`;
    for (let deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 100))) {
      const run = (await client.get(runPath)).body;
      if (TERMINAL.includes(run.status)) return expect(run.status, JSON.stringify(run)).to.equal('SUCCEEDED');
      if (Date.now() > deadline) throw new Error(`function run still ${run.status}`);
    }
  });

  it('refuses a limit below 1 and unknown strategies', async () => {
    const s = await sleeper(null);
    for (const concurrency of [{ limit: 0 }, { limit: 1, strategy: 'drop' }, { strategy: 'queue' }]) {
      const res = await s.client.patch(`/api/structures/${s.structureId}`, { concurrency });
      expect(res.status, JSON.stringify(concurrency)).to.equal(400);
    }
  });
});

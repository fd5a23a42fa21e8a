// The per-organization fair share of execution through the public api: with ORG_MAX_CONCURRENT_RUNS=2, one
// organization's backlog of sleeping runs waits QUEUED (saying why) and runs two at a time, while
// another organization's run starts at once; a knowledge base job and a chat message count in the same share
// (they wait while the organization's runs hold every slot, and start once one is given back). An api and a worker of their own run
// with that setting, on a task queue of their own, beside the stack's.
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { createActivities } from '../../activities';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { chatRequest } from '../harness/chat-requests';
import { uploadText } from '../harness/knowledge-bases';
import { SLEEP_PROGRAM, TERMINAL, waitForRun } from '../harness/runs';
import { getStack, newTenant, startApi } from '../harness/stack';

const LIMIT = 2;
const BACKLOG = 6;
// Long enough that the last of the backlog is seen waiting even when creates are slow on a loaded machine.
const SLEEP_SECONDS = 3;

/** `test` against an api and a worker of their own on `taskQueue`, with ORG_MAX_CONCURRENT_RUNS=LIMIT. */
async function withShare(taskQueue: string, test: (api: { baseUrl: string }) => Promise<void>): Promise<void> {
  const s = getStack();
  const config = {
    ...s.config,
    temporal: { ...s.config.temporal, taskQueue },
    execution: { ...s.config.execution, orgMaxConcurrentRuns: LIMIT },
  };
  const worker = await Worker.create({
    connection: s.env.nativeConnection,
    namespace: s.env.namespace ?? 'default',
    taskQueue,
    workflowBundle: s.workflowBundle,
    activities: createActivities({ ...s.activityDeps, config }),
  });
  const api = await startApi(s.env.client, 0, config);
  try {
    await worker.runUntil(() => test(api));
  } finally {
    await api.close();
  }
}

/** The first run of `runIds` seen waiting for an execution slot (polled in turn), or the last read once all ended. */
async function backlogRunSeenWaiting(key: string, runIds: string[], baseUrl: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const runs = [];
    for (const runId of runIds) {
      const run = (await as(key, baseUrl).get(`/api/structure-runs/${runId}`)).body;
      if (run.status_detail?.reason === 'WaitingForExecutionSlot') return run;
      runs.push(run);
    }
    if (runs.every((r) => TERMINAL.includes(r.status)) || Date.now() > deadline) return runs.at(-1);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('fair share of execution (ORG_MAX_CONCURRENT_RUNS)', function () {
  this.timeout(180_000);

  it("one organization's backlog waits its turn and does not delay another organization's run", async () => {
    const s = getStack();
    await withShare('tarmac-test-fair-share', async (api) => {
      const busy = await newTenant('fair-busy');
      const quiet = await newTenant('fair-quiet');
      const sleeper = await structureWithBuild(busy.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
      const oneLiner = await structureWithBuild(quiet.organizationId, {
        files: { 'structure.py': 'print("hello")\n' },
      });

      const backlog: string[] = [];
      for (let i = 0; i < BACKLOG; i++) {
        const created = await as(busy.key, api.baseUrl).post(`/api/structures/${sleeper.structureId}/runs`, {
          args: [String(SLEEP_SECONDS)],
        });
        expect(created.status, created.text).to.equal(201);
        backlog.push(created.body.structure_run_id);
      }
      // Some of the backlog waits, and says for what. (Which ones: the queue's order is the order in which the
      // workflows asked, see below; a run whose workflow asks late on a loaded machine is admitted at its first ask.)
      const waiting = await backlogRunSeenWaiting(busy.key, backlog, api.baseUrl);
      expect(waiting.status).to.equal('QUEUED');
      expect(waiting.status_detail.message).to.include(`ORG_MAX_CONCURRENT_RUNS=${LIMIT}`);
      expect(waiting.status_detail.limit).to.equal(LIMIT);

      // Another organization's one-line run is not held up behind the backlog.
      const askedAt = Date.now();
      const quick = await as(quiet.key, api.baseUrl).post(`/api/structures/${oneLiner.structureId}/runs`, {
        args: [],
      });
      expect(quick.status, quick.text).to.equal(201);
      const quickEnd = await waitForRun(quiet.key, quick.body.structure_run_id, undefined, 60_000, api.baseUrl);
      const quickMs = Date.now() - askedAt;
      expect(quickEnd.status).to.equal('SUCCEEDED');

      const ended = [];
      for (const runId of backlog) ended.push(await waitForRun(busy.key, runId, undefined, 120_000, api.baseUrl));
      expect(ended.map((r) => r.status)).to.deep.equal(backlog.map(() => 'SUCCEEDED'));
      // The whole backlog takes at least BACKLOG / LIMIT sleeps; the other organization's run took far less.
      const backlogMs =
        Math.max(...ended.map((r) => Date.parse(r.completed_at))) -
        Math.min(...ended.map((r) => Date.parse(r.created_at)));
      expect(backlogMs).to.be.at.least(((BACKLOG / LIMIT) * SLEEP_SECONDS - 0.5) * 1000);
      expect(
        quickMs,
        `the quiet organization's run (${quickMs} ms) waited for the backlog (${backlogMs} ms)`,
      ).to.be.lessThan(backlogMs - SLEEP_SECONDS * 1000);

      // Its turn, never more than LIMIT at once: the k-th run to start (k >= LIMIT) was admitted only once a slot
      // was given back, so only after k - LIMIT + 1 runs had ended. (Not by creation order: the queue's order is
      // the order in which the workflows asked for a slot, and runs created a few ms apart ask in either order.)
      const starts = ended.map((r) => Date.parse(r.started_at)).sort((a, b) => a - b);
      const ends = ended.map((r) => Date.parse(r.completed_at));
      for (let k = LIMIT; k < BACKLOG; k++) {
        const endedBefore = ends.filter((at) => at <= starts[k]).length;
        expect(endedBefore, `runs that had ended when the ${k + 1}th started`).to.be.at.least(k - LIMIT + 1);
      }
      for (const r of ended) {
        const at = Date.parse(r.started_at);
        const overlapping = ended.filter((o) => Date.parse(o.started_at) <= at && Date.parse(o.completed_at) > at);
        expect(overlapping.length, 'runs of the organization executing at once').to.be.at.most(LIMIT);
      }
      // Given back just after each run's terminal write.
      const held = async () =>
        (
          await s.ds.query(`SELECT count(*)::int AS n FROM execution_slots WHERE organization_id = $1`, [
            busy.organizationId,
          ])
        )[0].n as number;
      for (let i = 0; i < 100 && (await held()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await held(), 'every slot and queue place was given back').to.equal(0);
    });
  });

  it('counts knowledge base jobs and chat messages in the same share: they wait QUEUED while the runs hold every slot', async () => {
    const s = getStack();
    await withShare('tarmac-test-fair-share-jobs', async (api) => {
      const t = await newTenant('fair-jobs');
      const client = as(t.key, api.baseUrl);
      const sleeper = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
      const bucketId = (await client.post('/api/buckets', { name: 'docs' })).body.bucket_id;
      await uploadText(client, bucketId, 'a.md', 'Narwhals carry a spiral tusk.');
      const kb = await client.post('/api/knowledge-bases', {
        name: 'Docs',
        type: 'gtc_hybrid_sql_pg_vector',
        config: { gtc_hybrid_sql_pg_vector: {} },
        asset_paths: [`${bucketId}/a.md`],
      });
      expect(kb.status, kb.text).to.equal(201);
      const runs: string[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const created = await client.post(`/api/structures/${sleeper.structureId}/runs`, { args: ['4'] });
        expect(created.status, created.text).to.equal(201);
        runs.push(created.body.structure_run_id);
      }
      for (const runId of runs) await waitForRun(t.key, runId, (r) => r.status === 'RUNNING', 60_000, api.baseUrl);
      const created = await client.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
      expect(created.status, created.text).to.equal(202);
      const jobId = created.body.knowledge_base_job_id as string;
      const job = async () => (await client.get(`/api/knowledge-base-jobs/${jobId}`)).body;
      let seen = await job();
      for (let i = 0; i < 100 && seen.status_detail?.reason !== 'WaitingForExecutionSlot'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await job();
      }
      expect(seen.status, JSON.stringify(seen)).to.equal('QUEUED');
      expect(seen.status_detail).to.include({ reason: 'WaitingForExecutionSlot', limit: LIMIT });
      expect(seen.status_detail.message).to.include(`ORG_MAX_CONCURRENT_RUNS=${LIMIT}`);
      // A chat message waits its turn too: its request is answered once it has had a slot.
      const model = s.modelProvider.uniqueModel();
      s.modelProvider.script({ model, text: 'Hello there.' });
      const chat = client.post('/api/chat/messages', chatRequest(model));
      let exchange: Array<{ status: string; status_detail: { reason?: string } | null }> = [];
      for (let i = 0; i < 100 && exchange[0]?.status_detail?.reason !== 'WaitingForExecutionSlot'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        exchange = await s.ds.query(
          `SELECT status, status_detail FROM runs WHERE organization_id = $1 AND kind = 'chat'`,
          [t.organizationId],
        );
      }
      expect(exchange[0], JSON.stringify(exchange)).to.deep.include({ status: 'QUEUED' });
      expect(exchange[0].status_detail).to.include({ reason: 'WaitingForExecutionSlot' });
      const answered = await chat;
      expect(answered.status, answered.text).to.equal(201);
      expect(answered.body).to.include({ type: 'Message', role: 'assistant' });
      for (let i = 0; i < 300 && !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(seen.status); i++) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await job();
      }
      expect(seen.status, JSON.stringify(seen)).to.equal('SUCCEEDED');
      expect(seen.status_detail?.reason).to.not.equal('WaitingForExecutionSlot');
      const firstRunEnd = Math.min(
        ...(await Promise.all(runs.map((id) => waitForRun(t.key, id, undefined, 60_000, api.baseUrl)))).map((r) =>
          Date.parse(r.completed_at),
        ),
      );
      expect(Date.parse(seen.completed_at), 'the job ran once a run gave its slot back').to.be.at.least(firstRunEnd);
    });
  });
});

// Awaiting jobs' ends (src/jobs/await-end.ts) on a real PostgreSQL: awaitEnd answers once every job ended
// (a job without a row counts as ended), woken by the run notifications of a real LISTEN connection rather
// than its periodic re-read; it stops at once when its signal aborts (an activity's cancellation), heartbeats
// while it waits, and with `until` or `timeoutMs` answers a job that has not ended. waitFor is bounded.
import { expect } from 'chai';
import { awaitEnd, waitFor } from '../../../src/jobs/await-end';
import { DATA_JOB, RUN_JOB } from '../../../src/jobs/kinds';
import { transition } from '../../../src/jobs/transition';
import { createLogger } from '../../../src/logger';
import { RunUpdatesHub } from '../../../src/persistence/run-updates-hub';
import { databaseWithOrganization, dropDatabaseWithOrganization, insertJob } from '../../harness/job-rows';
import type { TestDatabase } from '../../harness/postgres';

const later = (ms: number, work: () => Promise<unknown>) =>
  new Promise<void>((resolve, reject) => setTimeout(() => work().then(() => resolve(), reject), ms));

describe('jobs: awaitEnd and waitFor', () => {
  let db: TestDatabase;
  let org: string;
  let hub: RunUpdatesHub;
  before(async () => {
    ({ db, org } = await databaseWithOrganization());
    hub = new RunUpdatesHub(db.url, createLogger('error', 'test'), 'tarmac-test-listen');
    await hub.start();
  });
  after(async () => {
    await hub?.close();
    await dropDatabaseWithOrganization(db, org);
  });

  it('answers once every job ended, with their last rows', async () => {
    const ids = [await insertJob(db.ds, DATA_JOB, org, 'RUNNING'), await insertJob(db.ds, DATA_JOB, org, 'RUNNING')];
    const ending = Promise.all([
      later(100, () => transition(db.ds, DATA_JOB, ids[0], 'SUCCEEDED')),
      later(300, () => transition(db.ds, DATA_JOB, ids[1], 'FAILED')),
    ]);
    const rows = await awaitEnd(db.ds, DATA_JOB, ids);
    await ending;
    expect(rows.map((r) => [r.data_job_id, r.status]).sort()).to.deep.equal(
      [
        [ids[0], 'SUCCEEDED'],
        [ids[1], 'FAILED'],
      ].sort(),
    );
  });

  it('counts a job without a row as ended', async () => {
    expect(await awaitEnd(db.ds, DATA_JOB, ['00000000-0000-4000-8000-000000000000'])).to.deep.equal([]);
  });

  it("wakes on a run's notification, not on its periodic re-read", async () => {
    const runId = await insertJob(db.ds, RUN_JOB, org, 'RUNNING');
    let subscribed = 0;
    const started = Date.now();
    const ending = later(100, async () => {
      subscribed = hub.subscriptionCount;
      await transition(db.ds, RUN_JOB, runId, 'SUCCEEDED');
    });
    const [run] = await awaitEnd(db.ds, RUN_JOB, [runId], { hub });
    await ending;
    expect(run.status).to.equal('SUCCEEDED');
    expect(subscribed, 'the wait listens for the run').to.equal(1);
    expect(hub.subscriptionCount, 'and stops listening once it answered').to.equal(0);
    // Notified: the read that sees the end comes right after the move, before the 500 ms re-read.
    expect(Date.now() - started, 'woken by the notification').to.be.lessThan(480);
  });

  it('stops at once when its signal aborts, with the reason, and heartbeats while it waits', async () => {
    const runId = await insertJob(db.ds, RUN_JOB, org, 'RUNNING');
    const abort = new AbortController();
    let beats = 0;
    setTimeout(() => abort.abort(new Error('activity cancelled')), 200);
    const started = Date.now();
    const error = await awaitEnd(db.ds, RUN_JOB, [runId], {
      hub,
      signal: abort.signal,
      heartbeat: () => beats++,
    }).catch((err: Error) => err);
    expect((error as Error).message).to.equal('activity cancelled');
    expect(Date.now() - started, 'the abort ends the pause, not the next re-read').to.be.lessThan(450);
    expect(beats).to.be.greaterThan(0);
  });

  it('answers a job that has not ended when `until` holds for it, or when `timeoutMs` passed', async () => {
    const queued = await insertJob(db.ds, RUN_JOB, org, 'QUEUED');
    const [held] = await awaitEnd(db.ds, RUN_JOB, [queued], { until: (r) => r.status === 'QUEUED' });
    expect(held.status).to.equal('QUEUED');
    const [open] = await awaitEnd(db.ds, RUN_JOB, [queued], { timeoutMs: 100 });
    expect(open.status).to.equal('QUEUED');
  });

  it('waitFor re-reads until the condition holds, and answers the last value at its deadline', async () => {
    let n = 0;
    expect(
      await waitFor(
        async () => ++n,
        (v) => v >= 3,
        5_000,
      ),
    ).to.equal(3);
    const started = Date.now();
    expect(
      await waitFor(
        async () => 'never',
        (v) => v === 'done',
        120,
      ),
    ).to.equal('never');
    expect(Date.now() - started).to.be.within(100, 1_000);
  });
});

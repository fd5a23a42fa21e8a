// Admission (src/jobs/admission.ts) against the real database: an organization's share, its queue in order,
// grants on release, other organizations untouched, ended jobs, the reconciler freeing the slot of a
// workflow that is gone, grants past the first waiters read (a long queue is read only as far as needed), and a
// run's start in the transaction that admits it. Within a concurrency key: first in first out in order of
// creation even when a newer run's workflow asks before an older one's (it takes a place for the older one),
// and the key's strategies (skip, cancel_in_progress) counting only the runs older than the one asking.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createReconcilerActivities } from '../../../activities/reconciler';
import { acquireSlot, releaseSlot, releaseSlotIn, type SlotJob } from '../../../src/jobs/admission';
import type { Concurrency } from '../../../src/persistence/entities/code-resource';
import { Run, RunEvent } from '../../../src/persistence/entities';
import { markStartingIn } from '../../../src/services/code/runs/lifecycle';
import { structureWithBuild } from '../../harness/builds';
import { aRun } from '../../harness/runs';
import { getStack, newTenant } from '../../harness/stack';

const LIMIT = 2;
/** The organization's share in the concurrency key tests: more than their keys let execute. */
const KEY_ORG_LIMIT = 5;

/** `n` QUEUED runs of a new structure of the organization, in creation order (each of `fields` besides). */
async function queuedRuns(organizationId: string, n: number, fields: Partial<Run> = {}): Promise<SlotJob[]> {
  const { structureId } = await structureWithBuild(organizationId, { files: { 'structure.py': '' } });
  const jobs: SlotJob[] = [];
  for (let i = 0; i < n; i++) {
    const created = new Date(Date.now() - 60_000 + i * 1000); // in creation order
    const of = { kind: 'structure', organization_id: organizationId, resource_id: structureId } as const;
    const run = aRun({ ...of, ...fields }, created);
    await getStack().ds.getRepository(Run).save(run);
    jobs.push({ kind: 'run', jobId: run.run_id });
  }
  return jobs;
}
const workflowIdOf = (job: SlotJob) => `structure-run-${job.jobId}`;
const acquireUnder = (limit: number) => (job: SlotJob) =>
  acquireSlot(getStack().ds, job, { workflowId: workflowIdOf(job), limit });
const releaseUnder = (limit: number) => (job: SlotJob) => releaseSlot(getStack().ds, job, { limit });
const ids = (grants: Array<{ jobId: string }>) => grants.map((g) => g.jobId);

describe('admission: execution slots per organization', () => {
  const acquire = acquireUnder(LIMIT);
  const release = releaseUnder(LIMIT);

  it('admits up to the share, queues the rest in order, and grants the oldest waiter on release', async () => {
    const t = await newTenant('admission');
    const [a, b, c, d] = await queuedRuns(t.organizationId, 4);
    expect(await acquire(a)).to.deep.equal({ outcome: 'admitted', granted: [] });
    expect(await acquire(b)).to.deep.equal({ outcome: 'admitted', granted: [] });
    // d asks before c: it waits behind c all the same.
    expect(await acquire(d)).to.deep.include({ outcome: 'waiting', executing: 2, ahead: 0, limit: LIMIT });
    expect(await acquire(c)).to.deep.include({ outcome: 'waiting', executing: 2, ahead: 0 });
    expect(await acquire(d)).to.deep.include({ outcome: 'waiting', executing: 2, ahead: 1 });
    const row = await getStack().ds.getRepository(Run).findOneByOrFail({ run_id: d.jobId });
    expect(row.status).to.equal('QUEUED');
    expect(row.status_detail).to.deep.include({ reason: 'WaitingForExecutionSlot', executing: 2, ahead: 1 });

    // Another organization is not counted against this one.
    const other = await newTenant('admission-other');
    const [x] = await queuedRuns(other.organizationId, 1);
    expect(await acquire(x)).to.deep.equal({ outcome: 'admitted', granted: [] });

    expect(ids(await release(a))).to.deep.equal([c.jobId]);
    expect(await acquire(c)).to.deep.equal({ outcome: 'admitted', granted: [] });
    const admitted = await getStack().ds.getRepository(Run).findOneByOrFail({ run_id: c.jobId });
    expect(admitted.status_detail, 'the waiting detail is cleared').to.equal(null);
    expect(await acquire(d)).to.deep.include({ outcome: 'waiting', ahead: 0 });
    expect(await release(a), 'a second release gives nothing').to.deep.equal([]);
    expect(ids(await release(b))).to.deep.equal([d.jobId]);
    for (const job of [c, d, x]) await release(job);
  });

  it('a release told the organization (a terminal write has the row) grants as one that looks it up', async () => {
    const t = await newTenant('admission-release-in');
    const [a, b, c] = await queuedRuns(t.organizationId, 3);
    await acquire(a);
    await acquire(b);
    expect(await acquire(c)).to.deep.include({ outcome: 'waiting' });
    const releaseIn = (job: SlotJob) =>
      getStack().ds.transaction((em) => releaseSlotIn(em, job, { limit: LIMIT, organizationId: t.organizationId }));
    expect(ids(await releaseIn(a))).to.deep.equal([c.jobId]);
    expect(await releaseIn(a), 'a second release gives nothing').to.deep.equal([]);
    expect(await acquire(c)).to.deep.equal({ outcome: 'admitted', granted: [] });
    for (const job of [b, c]) await release(job);
  });

  it('answers ended for a job that already ended, giving its slot back, and missing for no row', async () => {
    const t = await newTenant('admission-ended');
    const [a, b] = await queuedRuns(t.organizationId, 2);
    const [c] = await queuedRuns(t.organizationId, 1);
    await acquire(a);
    await acquire(b);
    expect(await acquire(c)).to.deep.include({ outcome: 'waiting' });
    await getStack().ds.query(`UPDATE runs SET status = 'CANCELLED' WHERE run_id = $1`, [a.jobId]);
    const ended = await acquire(a);
    expect(ended.outcome).to.equal('ended');
    expect(ids((ended as { granted: SlotJob[] }).granted)).to.deep.equal([c.jobId]);
    expect(await acquire({ kind: 'run', jobId: randomUUID() })).to.deep.equal({ outcome: 'missing' });
    for (const job of [b, c]) await release(job);
  });

  it('starts a run in the transaction that admits it, and only once it is admitted', async () => {
    const t = await newTenant('admission-start');
    const [a, b, c] = await queuedRuns(t.organizationId, 3);
    const { ds } = getStack();
    const startingAsked = (job: SlotJob) =>
      acquireSlot(ds, job, {
        workflowId: workflowIdOf(job),
        limit: LIMIT,
        start: (em) => markStartingIn(em, job.jobId),
      });
    const statusOf = async (job: SlotJob) =>
      (await ds.getRepository(Run).findOneByOrFail({ run_id: job.jobId })).status;
    const startingEvents = (job: SlotJob) =>
      ds.getRepository(RunEvent).countBy({ run_id: job.jobId, type: 'StructureRunStarting' });

    expect(await startingAsked(a)).to.deep.equal({ outcome: 'admitted', granted: [], status: 'STARTING' });
    expect(await acquire(b)).to.deep.equal({ outcome: 'admitted', granted: [] });
    expect(await startingAsked(c)).to.deep.include({ outcome: 'waiting' });
    expect(await statusOf(c), 'a waiting run does not start').to.equal('QUEUED');
    // Asked again (a retried local activity): admitted, STARTING, with its one event.
    expect(await startingAsked(a)).to.deep.include({ outcome: 'admitted', status: 'STARTING' });
    expect(await startingEvents(a)).to.equal(1);
    // A run cancelled while it waited is not started when it is granted: it ended.
    expect(ids(await release(b))).to.deep.equal([c.jobId]);
    await ds.query(`UPDATE runs SET status = 'CANCELLED' WHERE run_id = $1`, [c.jobId]);
    expect(await startingAsked(c)).to.deep.include({ outcome: 'ended' });
    expect(await startingEvents(c)).to.equal(0);
    for (const job of [a, c]) await release(job);
  });

  it('reads past the first waiters when they are held back, and grants a run in its parent slot on a full share', async () => {
    const s = getStack();
    const t = await newTenant('admission-deep');
    const paused = await queuedRuns(t.organizationId, 30); // more than a grant reads first
    const [structureId] = await s.ds.query(`SELECT resource_id FROM runs WHERE run_id = $1`, [paused[0].jobId]);
    await s.ds.query(`UPDATE code_resources SET queue_paused_at = now() WHERE resource_id = $1`, [
      structureId.resource_id,
    ]);
    for (const job of paused) expect(await acquire(job)).to.deep.include({ outcome: 'waiting', waitingFor: 'paused' });
    const [a, b, inParent] = await queuedRuns(t.organizationId, 3);
    for (const job of [a, b, inParent])
      await s.ds.query(`UPDATE runs SET created_at = now() WHERE run_id = $1`, [job.jobId]);
    expect(await acquire(a), 'past 30 paused waiters').to.deep.equal({ outcome: 'admitted', granted: [] });
    expect(await acquire(b)).to.deep.equal({ outcome: 'admitted', granted: [] });
    expect(await acquire(paused[0]), 'its own paused resource, on a full share').to.deep.include({
      outcome: 'waiting',
      waitingFor: 'paused',
    });
    expect(await acquire({ ...inParent, inParentSlot: true })).to.deep.equal({ outcome: 'admitted', granted: [] });
    for (const job of [a, b, inParent, ...paused]) await release(job);
  });

  it('the reconciler frees the slot of a job whose workflow is gone, and grants it to the next waiter', async () => {
    const s = getStack();
    const t = await newTenant('admission-orphan');
    const [waiter] = await queuedRuns(t.organizationId, 1);
    for (let i = 0; i < LIMIT; i++) {
      const gone = randomUUID();
      await s.ds.query(
        `INSERT INTO execution_slots (job_kind, job_id, organization_id, workflow_id, state, granted_at)
         VALUES ('run', $1, $2, $3, 'HOLDING', now() - interval '10 minutes')`,
        [gone, t.organizationId, `structure-run-${gone}`],
      );
    }
    expect(await acquire(waiter)).to.deep.include({ outcome: 'waiting', executing: LIMIT });
    const { settleOrphans } = createReconcilerActivities({
      ...s.activityDeps,
      config: { ...s.config, execution: { ...s.config.execution, orgMaxConcurrentRuns: LIMIT } },
    });
    const settled = await settleOrphans({ olderThanSeconds: 300, limit: 500 });
    expect(settled.executionSlots).to.be.at.least(LIMIT);
    const rows = await s.ds.query(`SELECT job_id, state FROM execution_slots WHERE organization_id = $1`, [
      t.organizationId,
    ]);
    expect(rows).to.deep.equal([{ job_id: waiter.jobId, state: 'HOLDING' }]);
    await release(waiter);
  });
});

describe('admission: a concurrency key in order of creation, whichever workflow asks first', () => {
  /** `n` QUEUED runs of one key of a new structure with `concurrency`, in creation order. */
  async function runsOfAKey(concurrency: Concurrency, n: number): Promise<SlotJob[]> {
    const t = await newTenant('admission-keys');
    const jobs = await queuedRuns(t.organizationId, n, { concurrency_key: 'k' });
    await getStack().ds.query(
      `UPDATE code_resources SET concurrency = $2 WHERE resource_id = (SELECT resource_id FROM runs WHERE run_id = $1)`,
      [jobs[0].jobId, JSON.stringify(concurrency)],
    );
    return jobs;
  }
  const acquire = acquireUnder(KEY_ORG_LIMIT);
  const release = releaseUnder(KEY_ORG_LIMIT);

  it('queue: the newer run asking first waits behind the older one, which gets the slot (and its signal)', async () => {
    const [older, newer] = await runsOfAKey({ limit: 1, strategy: 'queue' }, 2);
    const asked = await acquire(newer);
    expect(asked).to.deep.include({ outcome: 'waiting', waitingFor: 'key', executing: 1 });
    expect((asked as { granted: unknown[] }).granted).to.deep.equal([
      { kind: 'run', jobId: older.jobId, workflowId: workflowIdOf(older) },
    ]);
    expect(await acquire(older), 'its place was granted').to.deep.equal({ outcome: 'admitted', granted: [] });
    expect(ids(await release(older))).to.deep.equal([newer.jobId]);
    expect(await acquire(newer)).to.deep.equal({ outcome: 'admitted', granted: [] });
    await release(newer);
  });

  it('skip: the newer run asking first is skipped (the older is ahead of it); the older runs', async () => {
    const [older, newer] = await runsOfAKey({ limit: 1, strategy: 'skip' }, 2);
    expect(await acquire(newer)).to.deep.include({ outcome: 'skipped' });
    const skipped = await getStack().ds.getRepository(Run).findOneByOrFail({ run_id: newer.jobId });
    expect(skipped.status_detail).to.deep.include({ reason: 'Cancelled' });
    expect(await acquire(older)).to.deep.equal({ outcome: 'admitted', granted: [] });
    await release(older);
  });

  it('cancel_in_progress: each run supersedes only the runs older than it', async () => {
    const [holder, older, newer] = await runsOfAKey({ limit: 1, strategy: 'cancel_in_progress' }, 3);
    expect(await acquire(holder)).to.deep.include({ outcome: 'admitted' });
    const byNewer = await acquire(newer);
    expect(ids((byNewer as { superseded: { runs: SlotJob[] } }).superseded.runs)).to.deep.equal([
      holder.jobId,
      older.jobId,
    ]);
    const byOlder = await acquire(older);
    expect(ids((byOlder as { superseded: { runs: SlotJob[] } }).superseded.runs)).to.deep.equal([holder.jobId]);
    for (const job of [holder, older, newer]) await release(job);
  });

  it('passes over the place of a run cancelled before its workflow asked', async () => {
    const [holder, cancelled, newer] = await runsOfAKey({ limit: 1, strategy: 'queue' }, 3);
    expect(await acquire(holder)).to.deep.include({ outcome: 'admitted' });
    expect(await acquire(newer)).to.deep.include({ outcome: 'waiting', waitingFor: 'key' });
    await getStack().ds.query(`UPDATE runs SET status = 'CANCELLED' WHERE run_id = $1`, [cancelled.jobId]);
    expect(ids(await release(holder)), 'the newer run, not the cancelled one').to.deep.equal([newer.jobId]);
    for (const job of [cancelled, newer]) await release(job);
  });
});

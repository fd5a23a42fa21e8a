// Admission (src/jobs/admission.ts) against the real database: an organization's share, its queue in order,
// grants on release, other organizations untouched, ended jobs, the reconciler freeing the slot of a
// workflow that is gone, grants past the first waiters read (a long queue is read only as far as needed), and a
// run's start in the transaction that admits it.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createReconcilerActivities } from '../../../activities/reconciler';
import { acquireSlot, releaseSlot, type SlotJob } from '../../../src/jobs/admission';
import { Run, RunEvent } from '../../../src/persistence/entities';
import { markStartingIn } from '../../../src/services/code/runs/lifecycle';
import { structureWithBuild } from '../../harness/builds';
import { aRun } from '../../harness/runs';
import { getStack, newTenant } from '../../harness/stack';

const LIMIT = 2;

describe('admission: execution slots per organization', () => {
  async function queuedRuns(organizationId: string, n: number): Promise<SlotJob[]> {
    const { structureId } = await structureWithBuild(organizationId, { files: { 'structure.py': '' } });
    const jobs: SlotJob[] = [];
    for (let i = 0; i < n; i++) {
      const created = new Date(Date.now() - 60_000 + i * 1000); // in creation order
      const run = aRun({ kind: 'structure', organization_id: organizationId, resource_id: structureId }, created);
      await getStack().ds.getRepository(Run).save(run);
      jobs.push({ kind: 'run', jobId: run.run_id });
    }
    return jobs;
  }
  const acquire = (job: SlotJob) =>
    acquireSlot(getStack().ds, job, { workflowId: `structure-run-${job.jobId}`, limit: LIMIT });
  const release = (job: SlotJob) => releaseSlot(getStack().ds, job, { limit: LIMIT });
  const ids = (grants: Array<{ jobId: string }>) => grants.map((g) => g.jobId);

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
        workflowId: `structure-run-${job.jobId}`,
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

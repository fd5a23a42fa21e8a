// Admission within a concurrency key (src/jobs/admission.ts) against the real database: first in first out in
// order of creation even when a newer run's workflow asks before an older one's (it takes a place for the older
// one), and the key's strategies (skip, cancel_in_progress) counting only the runs older than the one asking.
import { expect } from 'chai';
import { acquireSlot, releaseSlot, type SlotJob } from '../../../src/jobs/admission';
import type { Concurrency } from '../../../src/persistence/entities/code-resource';
import { Run } from '../../../src/persistence/entities';
import { structureWithBuild } from '../../harness/builds';
import { aRun } from '../../harness/runs';
import { getStack, newTenant } from '../../harness/stack';

const LIMIT = 5;

describe('admission: a concurrency key in order of creation, whichever workflow asks first', () => {
  /** `n` QUEUED runs of one key of a structure with `concurrency`, in creation order. */
  async function runsOfAKey(concurrency: Concurrency, n: number): Promise<SlotJob[]> {
    const { ds } = getStack();
    const t = await newTenant('admission-keys');
    const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': '' } });
    await ds.query(`UPDATE code_resources SET concurrency = $2 WHERE resource_id = $1`, [
      structureId,
      JSON.stringify(concurrency),
    ]);
    const jobs: SlotJob[] = [];
    for (let i = 0; i < n; i++) {
      const created = new Date(Date.now() - 60_000 + i * 1000);
      const fields = { kind: 'structure', organization_id: t.organizationId, resource_id: structureId } as const;
      const run = aRun({ ...fields, concurrency_key: 'k' }, created);
      await ds.getRepository(Run).save(run);
      jobs.push({ kind: 'run', jobId: run.run_id });
    }
    return jobs;
  }
  const workflowIdOf = (job: SlotJob) => `structure-run-${job.jobId}`;
  const acquire = (job: SlotJob) => acquireSlot(getStack().ds, job, { workflowId: workflowIdOf(job), limit: LIMIT });
  const release = (job: SlotJob) => releaseSlot(getStack().ds, job, { limit: LIMIT });
  const ids = (grants: Array<{ jobId: string }>) => grants.map((g) => g.jobId);

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

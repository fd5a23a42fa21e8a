// The fence before a run's process is spawned (claimExecution): the first attempt of the execute activity
// claims the run; a retry whose earlier attempt claimed it (a missed heartbeat under load, while that attempt
// is still starting the process) is refused, so the user's code never starts twice.
import { expect } from 'chai';
import { Run } from '../../../../../src/persistence/entities';
import { claimExecution } from '../../../../../src/services/code/runs/lifecycle';
import { aRun } from '../../../../harness/runs';
import { getStack, newTenant } from '../../../../harness/stack';

describe('run execution claim', () => {
  it('lets one attempt claim a STARTING run, again and again, and refuses every other attempt', async () => {
    const { ds } = getStack();
    const t = await newTenant();
    const run = await ds
      .getRepository(Run)
      .save(aRun({ kind: 'chat', organization_id: t.organizationId, status: 'STARTING' }));
    expect(await claimExecution(ds, run.run_id, 1, 1)).to.equal(true);
    expect(await claimExecution(ds, run.run_id, 1, 1), 'the same attempt, retried').to.equal(true);
    expect(await claimExecution(ds, run.run_id, 2, 1), 'a retry after a presumed loss').to.equal(false);

    const queued = await ds.getRepository(Run).save(aRun({ kind: 'chat', organization_id: t.organizationId }));
    expect(await claimExecution(ds, queued.run_id, 1, 1), 'not STARTING').to.equal(false);
  });

  it("is the claim of one attempt of the run's retry policy: an activity of an earlier attempt cannot claim a later one", async () => {
    const { ds } = getStack();
    const t = await newTenant();
    // The run went back to QUEUED for attempt 2 (claim cleared) and started again.
    const run = await ds
      .getRepository(Run)
      .save(aRun({ kind: 'chat', organization_id: t.organizationId, status: 'STARTING', attempt: 2 }));
    expect(await claimExecution(ds, run.run_id, 1, 1), "attempt 1's activity, late").to.equal(false);
    expect(await claimExecution(ds, run.run_id, 1, 2), "attempt 2's activity").to.equal(true);
  });
});

// What a cancelled job is, kind by kind (src/jobs/kinds.ts): CANCELLED for the kinds that have that status;
// for deployments, which have none, ERROR with reason Cancelled, also when the reconciler finds the workflow
// closed as cancelled.
import { expect } from 'chai';
import { DATA_JOB, DEPLOYMENT_JOB, endedCancelled, INTEGRATION_DELIVERY, RUN_JOB } from '../../../src/jobs/kinds';

describe('job kinds: cancelled endings', () => {
  it('a kind with a CANCELLED status: that status, nothing else', () => {
    for (const kind of [RUN_JOB, DATA_JOB, INTEGRATION_DELIVERY]) {
      expect(endedCancelled(kind, { status: 'CANCELLED' }), kind.name).to.equal(true);
      expect(endedCancelled(kind, { status: 'FAILED', status_detail: { reason: 'Cancelled' } })).to.equal(false);
    }
  });

  it('a deployment: ERROR with reason Cancelled, not another ERROR or FAILED', () => {
    expect(DEPLOYMENT_JOB.terminal).to.not.include('CANCELLED');
    const cancelled = { status: 'ERROR', status_detail: { reason: 'Cancelled', requested_by: 'u' } };
    expect(endedCancelled(DEPLOYMENT_JOB, cancelled)).to.equal(true);
    expect(
      endedCancelled(DEPLOYMENT_JOB, { status: 'ERROR', status_detail: { reason: 'TimeLimitExceeded' } }),
    ).to.equal(false);
    expect(endedCancelled(DEPLOYMENT_JOB, { status: 'ERROR', status_detail: null })).to.equal(false);
    expect(endedCancelled(DEPLOYMENT_JOB, { status: 'FAILED', status_detail: { reason: 'Cancelled' } })).to.equal(
      false,
    );
  });

  it('a deployment whose workflow closed cancelled is settled as a cancelled one; closed otherwise, WorkflowClosed', () => {
    const lostCancelled = DEPLOYMENT_JOB.lost({}, 'CANCELLED', 'the workflow was cancelled');
    expect(endedCancelled(DEPLOYMENT_JOB, { status: lostCancelled.to, ...lostCancelled.changes })).to.equal(true);
    const lostTerminated = DEPLOYMENT_JOB.lost({}, 'TERMINATED', 'the workflow was terminated');
    expect(lostTerminated.to).to.equal('ERROR');
    expect(lostTerminated.changes.status_detail).to.deep.equal({
      reason: 'WorkflowClosed',
      message: 'the workflow was terminated',
    });
  });
});

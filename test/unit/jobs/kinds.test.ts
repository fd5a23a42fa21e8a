// The registry of job kinds (src/jobs/kinds.ts): every kind's `from` table only moves forward (an open status
// from the open ones before it, a terminal one from every open one, nothing from a terminal one; runs alone go
// back to QUEUED for a retry), names and workflow id prefixes are unique, what a lost job becomes, and what a cancelled job is (for deployments,
// which have no CANCELLED status, ERROR with reason Cancelled).
import { expect } from 'chai';
import {
  DATA_JOB,
  DEPLOYMENT_JOB,
  endedCancelled,
  INTEGRATION_DELIVERY,
  INVITE_RECORD,
  isJobKind,
  JOB_KINDS,
  KNOWLEDGE_BASE_JOB,
  RUN_JOB,
  type StatusKind,
} from '../../../src/jobs/kinds';

/** The statuses that may be moved to, each with the ones it is reached from, as pairs `from→to`. */
const moves = (kind: StatusKind) => Object.entries(kind.from).flatMap(([to, froms]) => froms.map((f) => `${f}→${to}`));

describe('job kinds: the registry', () => {
  for (const kind of JOB_KINDS) {
    describe(kind.name, () => {
      it('reaches each open status only from the open ones before it (a run also back to QUEUED for a retry)', () => {
        kind.open.forEach((status, i) => {
          const expected = kind === RUN_JOB && status === 'QUEUED' ? ['STARTING', 'RUNNING'] : kind.open.slice(0, i);
          expect(kind.from[status], status).to.deep.equal(expected);
        });
      });

      it('reaches every terminal status from every open one', () => {
        for (const status of kind.terminal) expect(kind.from[status], status).to.have.members([...kind.open]);
      });

      it('never leaves a terminal status, and knows no status besides its open and terminal ones', () => {
        const known = [...kind.open, ...kind.terminal];
        expect(Object.keys(kind.from)).to.have.members(known);
        for (const [to, froms] of Object.entries(kind.from)) {
          expect(
            froms.filter((f) => kind.terminal.includes(f)),
            `${to} from a terminal status`,
          ).to.deep.equal([]);
          expect(
            froms.filter((f) => !known.includes(f)),
            `${to} from an unknown status`,
          ).to.deep.equal([]);
        }
        expect(kind.open.filter((s) => kind.terminal.includes(s))).to.deep.equal([]);
      });

      it('starts QUEUED and has a second open status for the start to move it to', () => {
        expect(kind.open[0]).to.equal('QUEUED');
        expect(kind.open[1]).to.be.a('string');
      });

      it('is a job (it has a workflow) and passes status_detail as JSON, not as a PostgreSQL array', () => {
        expect(isJobKind(kind)).to.equal(true);
        expect(kind.jsonColumns).to.include('status_detail');
      });
    });
  }

  it('lists each kind once: unique names, tables and resource kinds', () => {
    const unique = (values: string[]) => expect(new Set(values).size, values.join(', ')).to.equal(values.length);
    unique(JOB_KINDS.map((k) => k.name));
    unique(JOB_KINDS.map((k) => k.table));
    const resourceKinds = JOB_KINDS.flatMap((k) =>
      k === RUN_JOB
        ? ['structure', 'function', 'tool', 'assistant', 'chat'].map((kind) => k.resourceKind({ kind }))
        : [k.resourceKind({})],
    );
    unique(resourceKinds);
    expect(resourceKinds).to.include.members(['structure-run', 'deployment', 'knowledge-base-job', 'data-job']);
  });

  it('gives an event feed only to a kind that notifies (the feed is appended in the notifying statement)', () => {
    for (const kind of JOB_KINDS) if (kind.eventFeed) expect(kind.notifyChannel, kind.name).to.be.a('string');
    expect(JOB_KINDS.filter((k) => k.eventFeed).map((k) => k.name)).to.deep.equal(['runs']);
  });

  it('keeps invites out of the jobs: a status record, forward only, not a job', () => {
    expect(isJobKind(INVITE_RECORD)).to.equal(false);
    expect(JOB_KINDS).to.not.include(INVITE_RECORD);
    expect(moves(INVITE_RECORD)).to.have.members(['PENDING→ACCEPTED', 'PENDING→REJECTED', 'PENDING→EXPIRED']);
  });

  describe('what a lost job becomes', () => {
    const reason = 'Its workflow ended (TERMINATED) without recording a final state';

    it('an ingestion job or delivery: CANCELLED when its workflow was cancelled, FAILED otherwise', () => {
      for (const kind of [KNOWLEDGE_BASE_JOB, DATA_JOB, INTEGRATION_DELIVERY]) {
        expect(kind.lost({}, 'CANCELLED', 'gone')).to.deep.equal({
          to: 'CANCELLED',
          changes: { status_detail: { reason: 'Cancelled', message: 'gone' } },
        });
        for (const state of ['TERMINATED', 'TIMED_OUT', 'FAILED', 'NOT_FOUND'])
          expect(kind.lost({}, state, reason), state).to.deep.equal({
            to: 'FAILED',
            changes: { status_detail: { reason: 'WorkflowClosed', message: reason } },
          });
      }
    });

    it('a run: ERROR with its completion, and a structure run says why in a last event', () => {
      const structure = RUN_JOB.lost({ kind: 'structure' }, 'TERMINATED', reason);
      expect(structure.to).to.equal('ERROR');
      expect(structure.changes.status_detail).to.deep.equal({ error: reason, reason: 'WorkflowClosed' });
      expect(structure.changes.completed_at).to.be.instanceOf(Date);
      expect(structure.events).to.deep.equal([
        { type: 'StructureRunError', origin: 'SYSTEM', payload: { status: 'ERROR', status_detail: { error: reason } } },
      ]);
      expect(RUN_JOB.lost({ kind: 'tool' }, 'TERMINATED', reason).events).to.deep.equal([]);
      const cancelled = RUN_JOB.lost({ kind: 'structure' }, 'CANCELLED', reason);
      expect([cancelled.to, cancelled.events]).to.deep.equal(['CANCELLED', undefined]);
    });

    it('a deployment: ERROR with its completion, whatever closed its workflow (reason Cancelled for a cancel)', () => {
      for (const state of ['CANCELLED', 'TERMINATED', 'NOT_FOUND']) {
        const lost = DEPLOYMENT_JOB.lost({}, state, reason);
        expect([lost.to, lost.changes.status_detail], state).to.deep.equal([
          'ERROR',
          { reason: state === 'CANCELLED' ? 'Cancelled' : 'WorkflowClosed', message: reason },
        ]);
        expect(lost.changes.completed_at).to.be.instanceOf(Date);
      }
    });

    it('reaches a terminal status that its kind reaches from every open one', () => {
      for (const kind of JOB_KINDS)
        for (const state of ['CANCELLED', 'TERMINATED', 'NOT_FOUND']) {
          const { to } = kind.lost({ kind: 'structure' }, state, reason);
          expect(kind.terminal, `${kind.name} ${state}`).to.include(to);
          expect(kind.from[to]).to.have.members([...kind.open]);
        }
    });
  });
});

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

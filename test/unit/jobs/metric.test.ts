// The jobs metric (src/jobs/metric.ts): an end is counted by kind and status, once per move (through the guarded
// transition on a real PostgreSQL, a retried end that did not move counts nothing), a move that does not end
// counts nothing, and a timed kind (runs) observes its queue-to-start when the move set started_at and its
// duration from its start, or its creation if it never started, to its completion.
import { expect } from 'chai';
import { DATA_JOB, RUN_JOB } from '../../../src/jobs/kinds';
import { recordMove } from '../../../src/jobs/metric';
import { transition } from '../../../src/jobs/transition';
import { jobsEnded, queueToStart, runDuration } from '../../../src/observability/metrics';
import { databaseWithOrganization, dropDatabaseWithOrganization, insertJob } from '../../harness/job-rows';
import type { TestDatabase } from '../../harness/postgres';

type Labels = Record<string, string>;
const matches = (labels: object, want: Labels) => Object.entries(want).every(([k, v]) => (labels as Labels)[k] === v);

/** The ends counted so far with these labels (the registry is the process's: tests read differences). */
const ended = async (labels: Labels) =>
  (await jobsEnded.get()).values.find((v) => matches(v.labels, labels))?.value ?? 0;

/** A histogram's observation count and sum with these labels. */
async function observed(histogram: typeof queueToStart | typeof runDuration, labels: Labels) {
  const { values } = await histogram.get();
  const of = (suffix: string) =>
    values.find((v) => v.metricName?.endsWith(suffix) && matches(v.labels, labels))?.value ?? 0;
  return { count: of('_count'), sum: of('_sum') };
}

describe('jobs: the jobs metric', () => {
  const created = new Date('2026-03-01T10:00:00Z');
  const at = (seconds: number) => new Date(+created + seconds * 1000);

  it('counts an end by kind and status, and nothing for a move that does not end', async () => {
    const labels = { kind: 'data-job', status: 'FAILED' };
    const before = await ended(labels);
    recordMove(DATA_JOB, { created_at: created }, 'RUNNING', false);
    expect(await ended(labels)).to.equal(before);
    recordMove(DATA_JOB, { created_at: created }, 'FAILED', false);
    expect(await ended(labels)).to.equal(before + 1);
  });

  it("labels a run's end with its resource kind", async () => {
    const labels = { kind: 'tool-run', status: 'SUCCEEDED' };
    const before = await ended(labels);
    recordMove(
      RUN_JOB,
      { kind: 'tool', created_at: created, started_at: at(1), completed_at: at(2) },
      'SUCCEEDED',
      false,
    );
    expect(await ended(labels)).to.equal(before + 1);
  });

  it('observes a run’s queue-to-start only on the move that set started_at', async () => {
    const labels = { kind: 'function-run' };
    const before = await observed(queueToStart, labels);
    const row = { kind: 'function', created_at: created, started_at: at(4) };
    recordMove(RUN_JOB, row, 'RUNNING', true);
    recordMove(RUN_JOB, row, 'RUNNING', false); // a later move of a started run
    const after = await observed(queueToStart, labels);
    expect(after.count - before.count).to.equal(1);
    expect(after.sum - before.sum).to.be.closeTo(4, 1e-9);
  });

  it('observes a run’s duration from its start, or from its creation when it never started', async () => {
    const labels = { kind: 'structure-run', status: 'CANCELLED' };
    const before = await observed(runDuration, labels);
    recordMove(
      RUN_JOB,
      { kind: 'structure', created_at: created, started_at: at(10), completed_at: at(15) },
      'CANCELLED',
      false,
    );
    recordMove(
      RUN_JOB,
      { kind: 'structure', created_at: created, started_at: null, completed_at: at(3) },
      'CANCELLED',
      false,
    );
    const after = await observed(runDuration, labels);
    expect(after.count - before.count).to.equal(2);
    expect(after.sum - before.sum).to.be.closeTo(5 + 3, 1e-9);
  });

  it('observes no histogram for a kind that is not timed', async () => {
    const before = await observed(runDuration, { kind: 'data-job' });
    recordMove(DATA_JOB, { created_at: created, started_at: at(1), completed_at: at(2) }, 'SUCCEEDED', true);
    expect(await observed(runDuration, { kind: 'data-job' })).to.deep.equal(before);
    expect(await observed(queueToStart, { kind: 'data-job' })).to.deep.equal(before);
  });

  describe('through the guarded transition', () => {
    let db: TestDatabase;
    let org: string;
    before(async () => ({ db, org } = await databaseWithOrganization()));
    after(() => dropDatabaseWithOrganization(db, org));

    it('counts an end once per move: a retried end, refused, counts nothing', async () => {
      const labels = { kind: 'data-job', status: 'SUCCEEDED' };
      const id = await insertJob(db.ds, DATA_JOB, org, 'RUNNING');
      const failed = { kind: 'data-job', status: 'FAILED' };
      const [before, failedBefore] = [await ended(labels), await ended(failed)];
      expect(await transition(db.ds, DATA_JOB, id, 'SUCCEEDED')).to.not.equal(undefined);
      expect(await transition(db.ds, DATA_JOB, id, 'SUCCEEDED')).to.equal(undefined);
      expect(await transition(db.ds, DATA_JOB, id, 'FAILED')).to.equal(undefined);
      expect(await ended(labels)).to.equal(before + 1);
      expect(await ended(failed)).to.equal(failedBefore);
    });

    it('observes a run’s queue-to-start when its start sets started_at, with the times of its row', async () => {
      const id = await insertJob(db.ds, RUN_JOB, org, 'STARTING', { created_at: new Date(Date.now() - 2_000) });
      const before = await observed(queueToStart, { kind: 'structure-run' });
      await transition(db.ds, RUN_JOB, id, 'RUNNING', { started_at: new Date() });
      const after = await observed(queueToStart, { kind: 'structure-run' });
      expect(after.count - before.count).to.equal(1);
      expect(after.sum - before.sum).to.be.within(1.5, 30);
    });
  });
});

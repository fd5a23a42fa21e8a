// The one start of a job (src/jobs/start.ts) on a real PostgreSQL: QUEUED moves to the kind's started status,
// a job started or ended already keeps its status, a row whose insert commits after the start began is waited
// for, two starts at once move it once, a run's events come with its start, and the start within a caller's
// transaction answers at once for a row that is not there. (A row that never appears is waited for
// ROW_VISIBLE_WAIT_MS, 10 s, a constant: that wait is not run here.)
import { expect } from 'chai';
import { DATA_JOB, JOB_KINDS, RUN_JOB } from '../../../src/jobs/kinds';
import { goesOn, startJob, startJobIn } from '../../../src/jobs/start';
import { databaseWithOrganization, dropDatabaseWithOrganization, insertJob, jobRow } from '../../harness/job-rows';
import type { TestDatabase } from '../../harness/postgres';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('jobs: the start', () => {
  let db: TestDatabase;
  let org: string;
  before(async () => ({ db, org } = await databaseWithOrganization()));
  after(() => dropDatabaseWithOrganization(db, org));

  it("moves a QUEUED job of every kind to the kind's started status and answers it", async () => {
    for (const kind of JOB_KINDS) {
      const id = await insertJob(db.ds, kind, org);
      expect(await startJob(db.ds, kind, id), kind.name).to.equal(kind.open[1]);
      expect((await jobRow(db.ds, kind, id))?.status, kind.name).to.equal(kind.open[1]);
    }
  });

  it('answers the status of a job started or ended already, and does not move it', async () => {
    const running = await insertJob(db.ds, RUN_JOB, org, 'RUNNING');
    expect(await startJob(db.ds, RUN_JOB, running)).to.equal('RUNNING');
    const cancelled = await insertJob(db.ds, DATA_JOB, org, 'CANCELLED');
    expect(await startJob(db.ds, DATA_JOB, cancelled)).to.equal('CANCELLED');
    expect((await jobRow(db.ds, DATA_JOB, cancelled))?.status).to.equal('CANCELLED');
  });

  it('tells a workflow whether its job goes on: started and open, not ended nor missing', () => {
    expect(goesOn(RUN_JOB, 'STARTING')).to.equal(true);
    expect(goesOn(RUN_JOB, 'RUNNING')).to.equal(true);
    expect(goesOn(RUN_JOB, 'CANCELLED')).to.equal(false);
    expect(goesOn(DATA_JOB, 'SUCCEEDED')).to.equal(false);
    expect(goesOn(DATA_JOB, undefined)).to.equal(false);
  });

  it('waits for a row whose insert commits after the start began (the api commits after the workflow starts)', async () => {
    let started: Promise<string | undefined> | undefined;
    let startedAt = 0;
    let id = '';
    await db.ds.transaction(async (em) => {
      id = await insertJob(em, DATA_JOB, org);
      startedAt = Date.now();
      started = startJob(db.ds, DATA_JOB, id);
      await sleep(300);
      expect((await jobRow(db.ds, DATA_JOB, id))?.status, 'invisible until the commit').to.equal(undefined);
    });
    expect(await started).to.equal('RUNNING');
    expect(Date.now() - startedAt).to.be.at.least(300);
    expect((await jobRow(db.ds, DATA_JOB, id))?.status).to.equal('RUNNING');
  });

  it('moves a job once when two starts come at once, and both answer its started status', async () => {
    const id = await insertJob(db.ds, RUN_JOB, org);
    const event = { type: 'StructureRunStarting', origin: 'SYSTEM' as const, payload: null };
    const answers = await Promise.all([startJob(db.ds, RUN_JOB, id, [event]), startJob(db.ds, RUN_JOB, id, [event])]);
    expect(answers).to.deep.equal(['STARTING', 'STARTING']);
    const events = await db.ds.query(`SELECT seq, type FROM run_events WHERE run_id = $1`, [id]);
    expect(events, 'the start that moved it appended its event, the other none').to.deep.equal([
      { seq: '1', type: 'StructureRunStarting' },
    ]);
  });

  it('within a transaction of the caller, answers at once: the started status, or undefined for no row', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org);
    const at = Date.now();
    const answers = await db.ds.transaction(async (em) => [
      await startJobIn(em, DATA_JOB, id),
      await startJobIn(em, DATA_JOB, id),
      await startJobIn(em, DATA_JOB, '00000000-0000-4000-8000-000000000000'),
    ]);
    expect(answers).to.deep.equal(['RUNNING', 'RUNNING', undefined]);
    expect(Date.now() - at, 'no wait for the missing row').to.be.lessThan(2_000);
  });
});

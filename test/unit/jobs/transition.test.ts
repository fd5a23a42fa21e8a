// The guarded transition (src/jobs/transition.ts) on a real PostgreSQL: a row moves forward only and never
// leaves a terminal status, a terminal move sets completed_at and clears the kind's onEnd columns, a run's move
// sends its NOTIFY from the moving statement (delivered at commit, seen by a LISTEN) and appends its events with
// it, JSON columns stay JSON, a guard holds a row back, and an unknown status is refused.
import { expect } from 'chai';
import { Client, type Notification } from 'pg';
import { DATA_JOB, INTEGRATION_DELIVERY, RUN_JOB } from '../../../src/jobs/kinds';
import { transition } from '../../../src/jobs/transition';
import { parseRunPayload, RUN_CHANNEL } from '../../../src/persistence/run-feed';
import { databaseWithOrganization, dropDatabaseWithOrganization, insertJob, jobRow } from '../../harness/job-rows';
import type { TestDatabase } from '../../harness/postgres';

describe('jobs: the guarded transition', () => {
  let db: TestDatabase;
  let org: string;
  before(async () => ({ db, org } = await databaseWithOrganization()));
  after(() => dropDatabaseWithOrganization(db, org));
  const statusOf = async (kind: typeof DATA_JOB, id: string) => (await jobRow(db.ds, kind, id))?.status;

  it('moves forward only: a row does not go back to a status before its own', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org);
    const moved = await transition(db.ds, DATA_JOB, id, 'RUNNING');
    expect(moved?.status).to.equal('RUNNING');
    expect(await transition(db.ds, DATA_JOB, id, 'QUEUED')).to.equal(undefined);
    expect(await transition(db.ds, DATA_JOB, id, 'RUNNING'), 'nor to the status it has').to.equal(undefined);
    expect(await statusOf(DATA_JOB, id)).to.equal('RUNNING');
  });

  it('never leaves a terminal status (a retried end is harmless)', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org, 'RUNNING');
    expect((await transition(db.ds, DATA_JOB, id, 'SUCCEEDED'))?.status).to.equal('SUCCEEDED');
    for (const to of ['FAILED', 'CANCELLED', 'SUCCEEDED', 'RUNNING'])
      expect(await transition(db.ds, DATA_JOB, id, to), to).to.equal(undefined);
    expect(await statusOf(DATA_JOB, id)).to.equal('SUCCEEDED');
  });

  it('answers undefined for a row that does not exist', async () => {
    expect(await transition(db.ds, DATA_JOB, '00000000-0000-4000-8000-000000000000', 'RUNNING')).to.equal(undefined);
  });

  it('sets completed_at and clears the onEnd columns on a terminal move, not before', async () => {
    const id = await insertJob(db.ds, INTEGRATION_DELIVERY, org, 'QUEUED', { payload: { body: 'kept until the end' } });
    const running = await transition(db.ds, INTEGRATION_DELIVERY, id, 'RUNNING');
    expect([running?.completed_at, running?.payload]).to.deep.equal([null, { body: 'kept until the end' }]);
    const ended = await transition(db.ds, INTEGRATION_DELIVERY, id, 'FAILED');
    expect(ended?.completed_at).to.be.instanceOf(Date);
    expect(ended?.payload).to.equal(null);

    // A completion the caller gives is kept.
    const at = new Date('2026-01-02T03:04:05Z');
    const other = await insertJob(db.ds, DATA_JOB, org, 'RUNNING');
    expect((await transition(db.ds, DATA_JOB, other, 'SUCCEEDED', { completed_at: at }))?.completed_at).to.deep.equal(
      at,
    );

    // A run clears the ending it kept for a lost answer; it does not stamp completed_at itself.
    const run = await insertJob(db.ds, RUN_JOB, org, 'RUNNING', { execution_ending: { code: 0 } });
    const runEnded = await transition(db.ds, RUN_JOB, run, 'SUCCEEDED');
    expect([runEnded?.execution_ending, runEnded?.completed_at]).to.deep.equal([null, null]);
  });

  it('sets the changes it is given, leaves undefined ones, and passes JSON columns as JSON', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org, 'RUNNING', { bytes_ingested: 7 });
    const errors = [{ message: 'one' }, { message: 'two' }];
    const moved = await transition(db.ds, DATA_JOB, id, 'FAILED', {
      status_detail: { reason: 'Boom', list: [1, 2] },
      errors,
      bytes_ingested: undefined,
    });
    expect(moved?.status_detail).to.deep.equal({ reason: 'Boom', list: [1, 2] });
    expect(moved?.errors).to.deep.equal(errors);
    expect(Number(moved?.bytes_ingested)).to.equal(7);
  });

  it('holds a row back that does not meet the guard', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org);
    expect(await transition(db.ds, DATA_JOB, id, 'RUNNING', {}, `bytes_ingested > 0`)).to.equal(undefined);
    expect((await transition(db.ds, DATA_JOB, id, 'RUNNING', {}, `bytes_ingested = 0`))?.status).to.equal('RUNNING');
  });

  it('refuses a status the kind does not have, and events for a kind without a feed', async () => {
    const id = await insertJob(db.ds, DATA_JOB, org);
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: Error) => err.message,
      );
    expect(await failure(transition(db.ds, DATA_JOB, id, 'DEPLOYING'))).to.equal('data_jobs has no status DEPLOYING');
    const event = { type: 'X', origin: 'SYSTEM' as const, payload: null };
    expect(await failure(transition(db.ds, DATA_JOB, id, 'RUNNING', {}, undefined, [event]))).to.equal(
      'data_jobs has no event feed',
    );
    expect(await statusOf(DATA_JOB, id)).to.equal('QUEUED');
  });

  describe('a kind that notifies (runs)', () => {
    let listener: Client;
    const heard: Notification[] = [];
    before(async () => {
      listener = new Client(db.url);
      await listener.connect();
      listener.on('notification', (n) => heard.push(n));
      await listener.query(`LISTEN ${RUN_CHANNEL}`);
    });
    after(() => listener?.end());
    /** The notifications of run `id` heard so far, once those sent before now have arrived (a round trip). */
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const heardOf = async (id: string) => {
      await listener.query('SELECT 1');
      return heard.filter((n) => parseRunPayload(n.payload ?? '').runId === id);
    };

    it('sends its NOTIFY from the moving statement: at commit, once, naming the organization', async () => {
      const id = await insertJob(db.ds, RUN_JOB, org);
      const before = (await heardOf(id)).length; // the insert's own, from the runs_created trigger
      await db.ds.transaction(async (em) => {
        const moved = await transition(em, RUN_JOB, id, 'STARTING');
        expect(moved).to.have.property('notified'); // the statement's pg_notify
        expect(await heardOf(id), 'nothing before the commit').to.have.length(before);
      });
      for (let i = 0; i < 20 && (await heardOf(id)).length === before; i++) await sleep(50);
      const notes = (await heardOf(id)).slice(before);
      expect(notes).to.have.length(1);
      expect(notes[0].channel).to.equal(RUN_CHANNEL);
      const payload = parseRunPayload(notes[0].payload!);
      expect(payload.organizationId).to.equal(org);
      expect(Math.abs(payload.sentAtMs! - Date.now())).to.be.lessThan(60_000);
    });

    it('sends nothing when the row did not move, nor when its transaction rolled back', async () => {
      const id = await insertJob(db.ds, RUN_JOB, org, 'SUCCEEDED');
      const before = (await heardOf(id)).length;
      expect(await transition(db.ds, RUN_JOB, id, 'RUNNING')).to.equal(undefined);
      const open = await insertJob(db.ds, RUN_JOB, org);
      const openBefore = (await heardOf(open)).length;
      await db.ds
        .transaction(async (em) => {
          await transition(em, RUN_JOB, open, 'STARTING');
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      expect((await heardOf(id)).length).to.equal(before);
      expect((await heardOf(open)).length).to.equal(openBefore);
      expect(await statusOf(RUN_JOB, open)).to.equal('QUEUED');
    });

    it('appends its events with the move, in order after the run’s last, and none when it did not move', async () => {
      const id = await insertJob(db.ds, RUN_JOB, org, 'RUNNING', { event_seq: 3 });
      const events = [
        { type: 'First', origin: 'SYSTEM' as const, payload: { n: 1 } },
        { type: 'Second', origin: 'USER' as const, payload: null },
      ];
      const moved = await transition(db.ds, RUN_JOB, id, 'ERROR', {}, undefined, events);
      expect(Number(moved?.event_seq)).to.equal(5);
      const stored = await db.ds.query(
        `SELECT seq, type, origin, payload, organization_id FROM run_events WHERE run_id = $1 ORDER BY seq`,
        [id],
      );
      expect(stored.map((e: { seq: string }) => ({ ...e, seq: Number(e.seq) }))).to.deep.equal([
        { seq: 4, type: 'First', origin: 'SYSTEM', payload: { n: 1 }, organization_id: org },
        { seq: 5, type: 'Second', origin: 'USER', payload: null, organization_id: org },
      ]);
      expect(await transition(db.ds, RUN_JOB, id, 'CANCELLED', {}, undefined, events)).to.equal(undefined);
      expect(await db.ds.query(`SELECT 1 FROM run_events WHERE run_id = $1`, [id])).to.have.length(2);
    });
  });
});

// The reconciliation of lost jobs (src/jobs/reconcile.ts) on a real PostgreSQL and a real Temporal (the dev
// server, no worker: a workflow nobody runs stays RUNNING): a job of every kind whose workflow never existed,
// or closed without recording an end, becomes what its kind's `lost` says (a structure run with its last
// event), a job whose workflow runs is left alone, rows touched recently are not examined, and at most `limit`
// rows of a kind are, the oldest first.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import { DATA_JOB, JOB_KINDS, RUN_JOB, type JobKind } from '../../../src/jobs/kinds';
import { settleLostJobs, workflowState } from '../../../src/jobs/reconcile';
import { loadConfig } from '../../../src/config';
import { workflowIdOf } from '../../../src/temporal/workflow-start';
import { devServerEnvironment, quietRuntime } from '../../harness/dev-server';
import { backdate, insertJob, jobRow, newOrganization, removeOrganization } from '../../harness/job-rows';
import { migratedDatabase, type TestDatabase } from '../../harness/postgres';

/** Examined: untouched for longer than this. The tests' lost rows are made older (backdate). */
const OLDER_THAN_SECONDS = 600;
const NEVER_STARTED = 'Its workflow does not exist (it was never started or was deleted)';
const TERMINATED = 'Its workflow ended (TERMINATED) without recording a final state';

describe('jobs: the reconciliation of lost jobs', () => {
  let db: TestDatabase;
  let env: TestWorkflowEnvironment;
  let org: string;
  /** No worker polls it: the workflows started on it stay RUNNING until terminated. */
  const taskQueue = `kernel-reconcile-${randomUUID()}`;
  before(async () => {
    quietRuntime();
    [db, env] = await Promise.all([migratedDatabase(), devServerEnvironment(loadConfig(process.env))]);
    org = await newOrganization(db.ds);
  });
  after(async () => {
    if (org) await removeOrganization(db.ds, org);
    await Promise.all([db?.stop(), env?.teardown()]);
  });

  const settle = (limit = 100) =>
    settleLostJobs({ ds: db.ds, temporal: env.client }, { olderThanSeconds: OLDER_THAN_SECONDS, limit });
  /** An open job of `kind`, untouched for `seconds`. */
  const lostJob = async (kind: JobKind, seconds = 3600, status = kind.open[1]) => {
    const id = await insertJob(db.ds, kind, org, status);
    await backdate(db.ds, kind, id, seconds);
    return id;
  };
  /** The job's workflow, started where no worker runs it. */
  const workflowOf = (kind: JobKind, id: string) =>
    env.client.workflow.start('neverEnds', {
      taskQueue,
      workflowId: workflowIdOf(kind.resourceKind({ kind: 'structure' }), id),
    });
  const counts = (of: Partial<Record<JobKind['name'], number>>) =>
    Object.fromEntries(JOB_KINDS.map((k) => [k.name, of[k.name] ?? 0]));

  it('makes a job of every kind whose workflow never existed what its kind says a lost job becomes', async () => {
    const ids = new Map<JobKind, string>();
    for (const kind of JOB_KINDS) ids.set(kind, await lostJob(kind));
    expect(await settle()).to.deep.equal(counts(Object.fromEntries(JOB_KINDS.map((k) => [k.name, 1]))));
    for (const [kind, id] of ids) {
      const row = await jobRow(db.ds, kind, id);
      const lost = kind.lost({ kind: 'structure' }, 'NOT_FOUND', NEVER_STARTED);
      expect(row?.status, kind.name).to.equal(lost.to);
      expect(row?.status_detail, kind.name).to.deep.equal(lost.changes.status_detail);
      expect(row?.completed_at, `${kind.name} completed`).to.be.instanceOf(Date);
    }
    // A structure run's stream ends with the event that says why.
    const events = await db.ds.query(`SELECT type, payload FROM run_events WHERE run_id = $1`, [ids.get(RUN_JOB)]);
    expect(events).to.deep.equal([
      { type: 'StructureRunError', payload: { status: 'ERROR', status_detail: { error: NEVER_STARTED } } },
    ]);
  });

  it('fails a job whose workflow closed without recording an end, naming how it closed', async () => {
    const job = await lostJob(DATA_JOB);
    const run = await lostJob(RUN_JOB, 3600, 'RUNNING');
    for (const [kind, id] of [
      [DATA_JOB, job],
      [RUN_JOB, run],
    ] as const)
      await (await workflowOf(kind, id)).terminate('lost for the test');
    expect(await settle()).to.deep.equal(counts({ dataJobs: 1, runs: 1 }));
    const jobRowNow = await jobRow(db.ds, DATA_JOB, job);
    expect([jobRowNow?.status, jobRowNow?.status_detail]).to.deep.equal([
      'FAILED',
      { reason: 'WorkflowClosed', message: TERMINATED },
    ]);
    const runRow = await jobRow(db.ds, RUN_JOB, run);
    expect([runRow?.status, runRow?.status_detail]).to.deep.equal([
      'ERROR',
      { error: TERMINATED, reason: 'WorkflowClosed' },
    ]);
    expect(await settle(), 'a settled job is not examined again').to.deep.equal(counts({}));
  });

  it('leaves alone a job whose workflow still runs', async () => {
    const id = await lostJob(DATA_JOB);
    const handle = await workflowOf(DATA_JOB, id);
    try {
      expect(await settle()).to.deep.equal(counts({}));
      expect((await jobRow(db.ds, DATA_JOB, id))?.status).to.equal('RUNNING');
    } finally {
      await handle.terminate('the test is over');
      await db.ds.query(`DELETE FROM data_jobs WHERE data_job_id = $1`, [id]);
    }
  });

  it('does not examine a job touched within olderThanSeconds (its workflow may be starting right now)', async () => {
    const fresh = await insertJob(db.ds, DATA_JOB, org);
    const recent = await lostJob(DATA_JOB, OLDER_THAN_SECONDS / 2);
    expect(await settle()).to.deep.equal(counts({}));
    for (const id of [fresh, recent]) expect((await jobRow(db.ds, DATA_JOB, id))?.status).to.not.equal('FAILED');
    await db.ds.query(`DELETE FROM data_jobs WHERE data_job_id = ANY($1)`, [[fresh, recent]]);
  });

  it('examines at most `limit` jobs of a kind, the longest untouched first', async () => {
    const oldest = await lostJob(DATA_JOB, 9000);
    const older = await lostJob(DATA_JOB, 8000);
    const old = await lostJob(DATA_JOB, 7000);
    expect(await settle(2)).to.deep.equal(counts({ dataJobs: 2 }));
    const statuses = await Promise.all(
      [oldest, older, old].map(async (id) => (await jobRow(db.ds, DATA_JOB, id))?.status),
    );
    expect(statuses).to.deep.equal(['FAILED', 'FAILED', 'RUNNING']);
    expect(await settle(2)).to.deep.equal(counts({ dataJobs: 1 }));
  });

  it('reads a workflow as Temporal sees it: RUNNING, the name of its closed state, or NOT_FOUND', async () => {
    const id = randomUUID();
    const handle = await workflowOf(DATA_JOB, id);
    expect(await workflowState(env.client, handle.workflowId)).to.equal('RUNNING');
    await handle.terminate('the test is over');
    expect(await workflowState(env.client, handle.workflowId)).to.equal('TERMINATED');
    expect(await workflowState(env.client, workflowIdOf('data-job', randomUUID()))).to.equal('NOT_FOUND');
  });
});

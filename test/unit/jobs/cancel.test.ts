// The one cancel of a job and the stop of open jobs (src/jobs/cancel.ts) on a real PostgreSQL and a real
// Temporal (the dev server, with a worker running the tiny job workflow of test/harness/job-workflows.ts, which
// records its end through finishJob when its `cancel` signal comes): a job already cancelled is answered as it
// is, one that ended otherwise (before or during the wait) is a 409, a cancel answers once the workflow recorded
// the end (with who asked), a workflow that is gone is not an error, and a stop waits until none is open.
// (A workflow that records nothing is waited for 10 s, a constant of cancel.ts: that wait is not run here.)
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { HttpError } from '../../../src/errors';
import { cancelAndWait, signalCancel, stopOpen } from '../../../src/jobs/cancel';
import { finishJob } from '../../../src/jobs/finish';
import { DATA_JOB, JOB_KINDS, RUN_JOB, type JobKind, type Row } from '../../../src/jobs/kinds';
import { loadConfig } from '../../../src/config';
import { workflowIdOf } from '../../../src/temporal/workflow-start';
import { devServerEnvironment, jobWorkflowBundle, quietRuntime } from '../../harness/dev-server';
import { insertJob, jobRow, newOrganization, removeOrganization } from '../../harness/job-rows';
import type { JobTestActivities } from '../../harness/job-workflows';
import { migratedDatabase, type TestDatabase } from '../../harness/postgres';

type Job = Row & { status: string };

describe('jobs: cancel and stop', () => {
  let db: TestDatabase;
  let env: TestWorkflowEnvironment;
  let org: string;
  let worker: Worker;
  let running: Promise<void>;
  const taskQueue = `kernel-cancel-${randomUUID()}`;

  before(async () => {
    quietRuntime();
    const [database, environment, workflowBundle] = await Promise.all([
      migratedDatabase(),
      devServerEnvironment(loadConfig(process.env)),
      jobWorkflowBundle(),
    ]);
    [db, env] = [database, environment];
    org = await newOrganization(db.ds);
    const activities: JobTestActivities = {
      // The end a job's workflow records (finishJob, as the job workflows do).
      recordEnd: ({ kind, id, status, requestedBy }) =>
        finishJob(
          db.ds,
          JOB_KINDS.find((k) => k.name === kind)!,
          id,
          {
            status: status as 'CANCELLED',
            ...(status === 'CANCELLED' ? { reason: 'Cancelled', requestedBy } : { reason: 'Done' }),
          },
        ),
    };
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle,
      activities,
      shutdownGraceTime: '1 second',
    });
    running = worker.run();
  });
  after(async () => {
    if (worker) {
      worker.shutdown();
      await running;
    }
    if (org) await removeOrganization(db.ds, org);
    await Promise.all([db?.stop(), env?.teardown()]);
  });

  const read = (kind: JobKind, id: string) => async () => (await jobRow(db.ds, kind, id)) as Job;
  /** A RUNNING data job whose workflow waits for its cancel signal, then records `endAs`. */
  async function cancellableJob(endAs = 'CANCELLED') {
    const id = await insertJob(db.ds, DATA_JOB, org, 'RUNNING');
    const handle = await env.client.workflow.start('cancellableJob', {
      taskQueue,
      workflowId: workflowIdOf('data-job', id),
      args: [{ kind: DATA_JOB.name, id, endAs }],
    });
    return { id, handle, job: (await read(DATA_JOB, id)()) as Job };
  }
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: unknown) => err,
    );

  it('answers a job already CANCELLED as it is, without asking its workflow (there is none)', async () => {
    const job = { data_job_id: randomUUID(), status: 'CANCELLED' };
    expect(await cancelAndWait(env.client, DATA_JOB, job, { requestedBy: 'u', read: async () => job })).to.equal(job);
  });

  it('refuses a job that ended otherwise with a 409 that names its end', async () => {
    for (const [kind, status, message] of [
      [DATA_JOB, 'SUCCEEDED', 'This job already ended: SUCCEEDED'],
      [RUN_JOB, 'ERROR', 'This run already ended: ERROR'],
    ] as const) {
      const job = { [kind.idColumn]: randomUUID(), kind: 'structure', status };
      const err = await refusal(cancelAndWait(env.client, kind, job, { requestedBy: 'u', read: async () => job }));
      expect(err).to.be.instanceOf(HttpError);
      expect([(err as HttpError).status, (err as HttpError).errors[0].message]).to.deep.equal([409, message]);
    }
  });

  it('signals the workflow and answers once it recorded the end, with who asked', async () => {
    const { id, handle, job } = await cancellableJob();
    const answered = await cancelAndWait(env.client, DATA_JOB, job, {
      requestedBy: 'user-7',
      read: read(DATA_JOB, id),
    });
    expect(answered.status).to.equal('CANCELLED');
    expect(answered.status_detail).to.deep.equal({ reason: 'Cancelled', requested_by: 'user-7' });
    expect(await handle.result()).to.equal('CANCELLED');
  });

  it('refuses with a 409 when the job ended otherwise during the wait (its work finished first)', async () => {
    const { id, job } = await cancellableJob('SUCCEEDED');
    const err = await refusal(cancelAndWait(env.client, DATA_JOB, job, { requestedBy: 'u', read: read(DATA_JOB, id) }));
    expect((err as HttpError).status).to.equal(409);
    expect((err as HttpError).errors[0].message).to.equal('This job already ended: SUCCEEDED');
    expect((await jobRow(db.ds, DATA_JOB, id))?.status).to.equal('SUCCEEDED');
  });

  it('takes a workflow that is gone (never started, or closed) as no error: the reconciler settles its job', async () => {
    const never = { data_job_id: randomUUID(), status: 'RUNNING' };
    await signalCancel(env.client, DATA_JOB, never, 'u');
    const { job, handle } = await cancellableJob();
    await handle.terminate('closed for the test');
    await signalCancel(env.client, DATA_JOB, job, 'u');
    expect((await handle.describe()).status.name).to.equal('TERMINATED');
  });

  it('sends the cancel signal with who asked to the workflow named after the job', async () => {
    const { job, handle } = await cancellableJob();
    await signalCancel(env.client, DATA_JOB, job, 'user-9');
    await handle.result();
    const history = await handle.fetchHistory();
    const signals = (history.events ?? []).flatMap((e) =>
      e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes] : [],
    );
    expect(signals.map((s) => s.signalName)).to.deep.equal(['cancel']);
    const payload = signals[0].input?.payloads?.[0]?.data;
    expect(JSON.parse(Buffer.from(payload!).toString('utf8'))).to.deep.equal({ requestedBy: 'user-9' });
  });

  it('stops every open job and waits until none of them is open; nothing to stop returns at once', async () => {
    const jobs = await Promise.all([cancellableJob(), cancellableJob()]);
    await stopOpen(
      { ds: db.ds, temporal: env.client },
      DATA_JOB,
      jobs.map((j) => j.job),
      'owner-1',
    );
    for (const { id } of jobs) {
      const row = await jobRow(db.ds, DATA_JOB, id);
      expect([row?.status, (row?.status_detail as Row).requested_by]).to.deep.equal(['CANCELLED', 'owner-1']);
    }
    const at = Date.now();
    await stopOpen({ ds: db.ds, temporal: env.client }, DATA_JOB, [], 'owner-1');
    expect(Date.now() - at).to.be.lessThan(100);
  });
});

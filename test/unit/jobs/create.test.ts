// The one creation of a job (src/jobs/create.ts) on a real PostgreSQL and a real Temporal (the dev server, a
// worker of the test's own running test/harness/job-workflows.ts where a workflow must answer): insertAndStart
// commits the record and starts its workflow named after the resource (search attributes, memo, summary), a
// failed start leaves no row (the transaction rolled back, or `undo` run), each creation is counted once; and
// startAndWait answers a short workflow's result, or fails once its execution timeout passed.
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { expect } from 'chai';
import type { EntityManager } from 'typeorm';
import { loadConfig } from '../../../src/config';
import { insertAndStart, startAndWait } from '../../../src/jobs/create';
import { DATA_JOB } from '../../../src/jobs/kinds';
import { jobsCreated } from '../../../src/observability/metrics';
import { ORGANIZATION_ID, RESOURCE_ID, RESOURCE_KIND } from '../../../src/temporal/search-attributes';
import { workflowIdOf, type WorkflowResource } from '../../../src/temporal/workflow-start';
import { devServerEnvironment, jobWorkflowBundle, quietRuntime } from '../../harness/dev-server';
import { insertJob, jobRow, newOrganization, removeOrganization } from '../../harness/job-rows';
import { migratedDatabase, type TestDatabase } from '../../harness/postgres';

const created = async () => (await jobsCreated.get()).values.find((v) => v.labels.kind === 'data-job')?.value ?? 0;
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe('jobs: creation with its workflow', () => {
  let db: TestDatabase;
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;
  let org: string;
  /** Polled only by the workers of the startAndWait tests: elsewhere a started workflow just stays RUNNING. */
  const taskQueue = `kernel-create-${randomUUID()}`;
  before(async () => {
    quietRuntime();
    [db, env, bundle] = await Promise.all([
      migratedDatabase(),
      devServerEnvironment(loadConfig(process.env)),
      jobWorkflowBundle(),
    ]);
    org = await newOrganization(db.ds);
  });
  after(async () => {
    if (org) await removeOrganization(db.ds, org);
    await Promise.all([db?.stop(), env?.teardown()]);
  });

  const resourceOf = (id: string): WorkflowResource => ({
    kind: 'data-job',
    id,
    organizationId: org,
    summary: 'a kernel test',
  });
  /** A data job's insert, with its id given (the resource the workflow is named after). */
  const insertOf = (id: string) => async (em: EntityManager) => {
    await insertJob(em, DATA_JOB, org, 'QUEUED', { data_job_id: id });
    return { id };
  };
  /** A workflow id already taken by a closed workflow: a new start of it is refused (REJECT_DUPLICATE). */
  async function takenId(): Promise<string> {
    const id = randomUUID();
    const handle = await env.client.workflow.start('neverEnds', {
      taskQueue,
      workflowId: workflowIdOf('data-job', id),
    });
    await handle.terminate('taken for the test');
    return id;
  }
  const start = { type: 'neverEnds', args: [] };

  it('commits the record and starts its workflow named after the resource, with its attributes and memo', async () => {
    const id = randomUUID();
    const before = await created();
    const row = await insertAndStart(db.ds, env.client, {
      taskQueue,
      resource: resourceOf(id),
      insert: insertOf(id),
      start,
    });
    expect(row).to.deep.equal({ id });
    expect((await jobRow(db.ds, DATA_JOB, id))?.status).to.equal('QUEUED');
    const handle = env.client.workflow.getHandle(workflowIdOf('data-job', id));
    const described = await handle.describe();
    expect([described.type, described.taskQueue, described.status.name]).to.deep.equal([
      'neverEnds',
      taskQueue,
      'RUNNING',
    ]);
    expect(described.memo).to.deep.equal({ resource_kind: 'data-job', resource_id: id, organization_id: org });
    const attributes = described.typedSearchAttributes;
    expect([attributes.get(RESOURCE_ID), attributes.get(ORGANIZATION_ID), attributes.get(RESOURCE_KIND)]).to.deep.equal(
      [id, org, 'data-job'],
    );
    expect(await described.staticSummary()).to.equal('a kernel test');
    expect(await created(), 'counted once').to.equal(before + 1);
    await handle.terminate('the test is over');
  });

  it('starts a workflow built from the inserted row, with the summary it gives', async () => {
    const id = randomUUID();
    await insertAndStart(db.ds, env.client, {
      taskQueue,
      resource: resourceOf(id),
      insert: insertOf(id),
      start: (row) => ({ type: 'neverEnds', args: [], summary: `job ${row.id}` }),
    });
    const handle = env.client.workflow.getHandle(workflowIdOf('data-job', id));
    expect(await (await handle.describe()).staticSummary()).to.equal(`job ${id}`);
    await handle.terminate('the test is over');
  });

  it('leaves no row when the start fails inside the transaction (no undo): the insert rolls back', async () => {
    const id = await takenId();
    const before = await created();
    const err = await failure(
      insertAndStart(db.ds, env.client, { taskQueue, resource: resourceOf(id), insert: insertOf(id), start }),
    );
    expect(err).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);
    expect(await jobRow(db.ds, DATA_JOB, id)).to.equal(undefined);
    expect(await created(), 'not counted').to.equal(before);
  });

  it('with undo: commits first (one statement, no transaction) and runs undo when the start fails', async () => {
    const ok = randomUUID();
    const undone: string[] = [];
    const undo = (id: string) => async (em: EntityManager) => {
      undone.push(id);
      await em.query(`DELETE FROM data_jobs WHERE data_job_id = $1`, [id]);
    };
    await insertAndStart(db.ds, env.client, {
      taskQueue,
      resource: resourceOf(ok),
      insert: insertOf(ok),
      undo: undo(ok),
      oneStatement: true,
      start,
    });
    expect((await jobRow(db.ds, DATA_JOB, ok))?.status).to.equal('QUEUED');
    await env.client.workflow.getHandle(workflowIdOf('data-job', ok)).terminate('the test is over');

    const refused = await takenId();
    const err = await failure(
      insertAndStart(db.ds, env.client, {
        taskQueue,
        resource: resourceOf(refused),
        insert: insertOf(refused),
        undo: undo(refused),
        start,
      }),
    );
    expect(err).to.be.instanceOf(WorkflowExecutionAlreadyStartedError);
    expect(undone).to.deep.equal([refused]);
    expect(await jobRow(db.ds, DATA_JOB, refused)).to.equal(undefined);
  });

  describe('startAndWait', () => {
    const withWorker = async <T>(fn: () => Promise<T>) => {
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: bundle,
        shutdownGraceTime: '1 second',
      });
      return worker.runUntil(fn);
    };
    const resource = (): WorkflowResource => ({ ...resourceOf(randomUUID()), kind: 'knowledge-base-query' });

    it("answers the short workflow's result", async () => {
      const answer = await withWorker(() =>
        startAndWait<string>(env.client, {
          taskQueue,
          resource: resource(),
          start: { type: 'answers', args: ['which kernel?'] },
          timeoutMs: 10_000,
        }),
      );
      expect(answer).to.equal('answered: which kernel?');
    });

    it('fails once the execution timeout (timeoutMs, in whole seconds) passed', async () => {
      const at = Date.now();
      const err = await withWorker(() =>
        failure(
          startAndWait(env.client, {
            taskQueue,
            resource: resource(),
            start: { type: 'neverEnds', args: [] },
            timeoutMs: 800,
          }),
        ),
      );
      expect(err).to.be.instanceOf(WorkflowFailedError);
      expect((err as WorkflowFailedError).message).to.match(/timed out/i);
      expect(Date.now() - at).to.be.at.least(900);
    });
  });
});

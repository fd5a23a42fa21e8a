// Worker Versioning on the pinned dev server (src/temporal/worker-versioning.ts): two builds of one Worker
// Deployment poll the same task queue. The first makes itself current (onlyIfNone, as a first install's worker
// does), the second does not until promoted; a workflow started before the promotion stays on the first build
// to its end, one started after runs on the second, and the first build is then draining (or drained).
import { Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { cancelRunSignal } from '../../../src/temporal/contracts';
import {
  describeDeployment,
  setCurrentVersion,
  versionStatus,
  workerDeploymentOptions,
  workerVersionOf,
} from '../../../src/temporal/worker-versioning';
import { devServerEnvironment, jobWorkflowBundle, quietRuntime } from '../../harness/dev-server';

const DEPLOYMENT = `tarmac-test-${process.pid}`;
const TASK_QUEUE = `versioning-${process.pid}`;

describe('worker versioning: builds side by side', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  const workers: Array<{ worker: Worker; running: Promise<void> }> = [];

  before(async () => {
    quietRuntime();
    env = await devServerEnvironment(loadConfig({}));
  });
  after(async () => {
    for (const w of workers) w.worker.shutdown();
    await Promise.all(workers.map((w) => w.running));
    await env?.teardown();
  });

  /** A worker of build `buildId`, configured as createWorker configures one (WORKER_BUILD_ID). */
  const startBuild = async (buildId: string) => {
    const config = loadConfig({ WORKER_BUILD_ID: buildId, WORKER_DEPLOYMENT_NAME: DEPLOYMENT });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: TASK_QUEUE,
      workflowBundle: await jobWorkflowBundle(),
      activities: { recordEnd: async (input: { status: string }) => input.status },
      workerDeploymentOptions: workerDeploymentOptions(config),
    });
    workers.push({ worker, running: worker.run() });
    return workerVersionOf(config)!;
  };
  const start = (id: string) =>
    env.client.workflow.start('cancellableJob', {
      taskQueue: TASK_QUEUE,
      workflowId: `${DEPLOYMENT}-${id}`,
      args: [{ kind: 'run', id, endAs: 'CANCELLED' }],
    });
  /** The builds that completed the workflow's tasks, from its history. */
  const buildsOf = async (workflowId: string) => {
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    return [
      ...new Set(
        (history.events ?? [])
          .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId)
          .filter((b): b is string => !!b),
      ),
    ];
  };

  it('keeps a workflow on the build that started it; new ones go to the promoted build', async () => {
    const a = await startBuild('build-a');
    expect(await setCurrentVersion(env.client, 'default', a, { onlyIfNone: true })).to.equal(true);
    const before = await start('before');
    const b = await startBuild('build-b');
    // A deployment with a current version: a new build does not make itself current.
    expect(await setCurrentVersion(env.client, 'default', b, { onlyIfNone: true })).to.equal(false);
    expect((await describeDeployment(env.client, 'default', DEPLOYMENT)).currentBuildId).to.equal('build-a');
    expect(await setCurrentVersion(env.client, 'default', b)).to.equal(true);
    expect((await describeDeployment(env.client, 'default', DEPLOYMENT)).currentBuildId).to.equal('build-b');
    const after = await start('after');

    for (const h of [before, after]) await h.signal(cancelRunSignal, { requestedBy: 'test' });
    expect(await before.result()).to.equal('CANCELLED');
    expect(await after.result()).to.equal('CANCELLED');
    expect(await buildsOf(before.workflowId)).to.deep.equal(['build-a']);
    expect(await buildsOf(after.workflowId)).to.deep.equal(['build-b']);
    expect((await versionStatus(env.client, 'default', b)).status).to.equal('CURRENT');
    expect(['DRAINING', 'DRAINED']).to.include((await versionStatus(env.client, 'default', a)).status);
  });
});

import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import type { DataSource } from 'typeorm';
import { createActivities, ActivityDeps } from '../../activities';
import { createBlobStore } from '../blobs/create-blob-store';
import { exportWorkflowStackTraces, type Config } from '../config';
import { createModelDriver } from '../drivers/model';
import type { Logger } from '../logger';
import type { RunUpdatesHub } from '../persistence/run-updates-hub';
import { LocalBuilds } from '../runtime/build/local-builds';
import type { Sandbox } from '../runtime/sandbox/sandbox';
import { workerTracingOptions } from '../observability/temporal-tracing';
import type { Tracing } from '../observability/tracing';
import { SecretBox } from '../security/secret-box';
import { deploymentsInUse } from '../services/code/build-retention';
import { workerDeploymentOptions } from '../temporal/worker-versioning';

/** Path of the workflows entry (compiled JS next to this file's tree). */
export const WORKFLOWS_PATH = require.resolve('../../workflows');

/** What activities are given, from the configuration and the process's connections (one way, for every worker). */
export function activityDepsFor(
  config: Config,
  connections: { ds: DataSource; temporal: Client; log: Logger; sandbox: Sandbox; runUpdates?: RunUpdatesHub },
): ActivityDeps {
  if (!config.secretsKey) throw new Error('SECRETS_KEY is required by the worker');
  const blobs = createBlobStore(config);
  const { sandbox, ds, log } = connections;
  return {
    ...connections,
    config,
    blobs,
    builds: new LocalBuilds({
      buildDir: config.buildDir,
      blobs,
      maxBytes: config.buildLocalCacheBytes,
      maxBuildBytes: config.buildQuota.diskBytes,
      ownTree: (dir, sandboxIndex) => sandbox.chownTree(dir, { platformFor: sandbox.gidOf(sandboxIndex) }),
      sandboxed: sandbox.enabled,
      inUseElsewhere: (ids) => deploymentsInUse(ds, ids),
      log,
    }),
    box: new SecretBox(config.secretsKey),
    models: createModelDriver(config.models),
  };
}

/** One worker on one task queue with every workflow and activity; used by `npm run worker` and tests. */
export async function createWorker(opts: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  workflowBundle?: WorkerOptions['workflowBundle'];
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /** From startTracing: trace workflows and activities (a prebuilt bundle must include WORKFLOW_TRACING_MODULES). */
  tracing?: Tracing;
}): Promise<Worker> {
  // Off unless configured: the SDK's workflow thread then takes no stack trace of each promise a workflow makes.
  exportWorkflowStackTraces(opts.deps.config);
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: createActivities(opts.deps),
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    shutdownGraceTime: opts.shutdownGraceTime ?? '10 seconds',
    // Each organization gets its share of these (ORG_MAX_CONCURRENT_RUNS, src/jobs/admission.ts).
    maxConcurrentActivityTaskExecutions: opts.deps.config.execution.workerActivitySlots,
    // Heartbeats carry cancellation back to long activities (a cancelled run stops its process when its
    // heartbeat is answered). The default throttle (80% of the heartbeat timeout) would delay a cancel by
    // up to ~12 s; one second keeps it prompt at one small RPC per second per running activity.
    maxHeartbeatThrottleInterval: '1 second',
    // A killed worker's cached workflows wait this long on its sticky queue before another worker takes
    // them over (Temporal's default is 10 s, which added that much to every recovery in the worker-kill drill).
    stickyQueueScheduleToStartTimeout: '3 seconds',
    // WORKER_BUILD_ID: polls as that version of the Worker Deployment, each workflow pinned to the build that
    // started it (src/temporal/worker-versioning.ts); unset, unversioned.
    workerDeploymentOptions: workerDeploymentOptions(opts.deps.config),
    ...workerTracingOptions(opts.tracing),
  });
}

import { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import { createActivities, ActivityDeps } from '../../activities';

/** Path of the workflows entry (compiled JS next to this file's tree). */
export const WORKFLOWS_PATH = require.resolve('../../workflows');

/** One worker on one task queue with every workflow and activity; used by `npm run worker` and tests. */
export async function createWorker(opts: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  workflowBundle?: WorkerOptions['workflowBundle'];
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
}): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: createActivities(opts.deps),
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    shutdownGraceTime: opts.shutdownGraceTime ?? '10 seconds',
    // Heartbeats carry cancellation back to long activities (a cancelled run stops its process when its
    // heartbeat is answered). The default throttle (80% of the heartbeat timeout) would delay a cancel by
    // up to ~12 s; one second keeps it prompt at one small RPC per second per running activity.
    maxHeartbeatThrottleInterval: '1 second',
  });
}

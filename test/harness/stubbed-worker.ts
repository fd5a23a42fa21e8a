// A worker on the time-skipping server with the real activities (status writes and admission on PostgreSQL),
// except the ones a test stubs (a process, a build, a model step): what the time-skipping workflow tests of
// run control run their workflows on.
import { Worker } from '@temporalio/worker';
import { createActivities, type Activities } from '../../activities';
import type { Config } from '../../src/config';
import { getStack, type startTimeSkipping } from './stack';

export interface StubbedWorker {
  stop(): Promise<void>;
}

export async function startStubbedWorker(
  ts: Awaited<ReturnType<typeof startTimeSkipping>>,
  opts: { taskQueue: string; stubs: Partial<Activities>; config?: Config },
): Promise<StubbedWorker> {
  const s = getStack();
  const activities = createActivities({ ...s.activityDeps, config: opts.config ?? s.config, temporal: ts.env.client });
  const worker = await Worker.create({
    connection: ts.env.nativeConnection,
    namespace: ts.env.namespace ?? 'default',
    taskQueue: opts.taskQueue,
    workflowBundle: s.workflowBundle,
    activities: { ...activities, ...opts.stubs },
  });
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
    },
  };
}

import type { TestWorkflowEnvironment } from '@temporalio/testing';

/**
 * The Java test server never skips time while an activity is in progress: each one holds a time-skipping
 * lock (neither auto-skipping nor env.sleep() moves the clock; they wait in real time). To let a workflow
 * timer fire while a long activity runs, release one lock for the duration of the skip and take it back.
 */
export async function skipWhileActivityRuns(env: TestWorkflowEnvironment, ms: number): Promise<void> {
  const { testService } = env.connection as unknown as {
    testService: { lockTimeSkipping(r: object): Promise<unknown>; unlockTimeSkipping(r: object): Promise<unknown> };
  };
  await testService.unlockTimeSkipping({});
  try {
    await env.sleep(ms);
  } finally {
    await testService.lockTimeSkipping({});
  }
}

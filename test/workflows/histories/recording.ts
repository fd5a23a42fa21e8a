// Runs scenarios of scenarios.ts with the stubbed activities on the time-skipping server, by the workflow code
// of the checkout, and saves each history under its file name (record.ts and record-patched.ts).
import { Worker } from '@temporalio/worker';
import { getStack, startTimeSkipping } from '../../harness/stack';
import { saveHistory } from './history-files';
import { jobStubs, runScenario, type RecordedWorkflow, type Scenario } from './scenarios';

export async function recordScenarios(
  taskQueue: string,
  recordings: Array<{ workflow: RecordedWorkflow; scenario: Scenario; file: string }>,
  opts: { slotGrants?: boolean } = {},
): Promise<void> {
  const ts = await startTimeSkipping();
  const { activities, working } = jobStubs(opts.slotGrants ? { slotGrants: ts.env.client } : {});
  try {
    const worker = await Worker.create({
      connection: ts.env.nativeConnection,
      namespace: ts.env.namespace ?? 'default',
      taskQueue,
      workflowBundle: getStack().workflowBundle,
      activities,
    });
    await worker.runUntil(async () => {
      for (const { workflow, scenario, file } of recordings) {
        const { handle, result } = await runScenario(ts.env.client, taskQueue, workflow, scenario, working);
        await saveHistory(handle, file);
        console.log(`${file}: ${JSON.stringify(result)}`);
      }
    });
  } finally {
    await ts.stop();
  }
}

// Records the histories that replay.test.ts replays: every scenario of every workflow of scenarios.ts, run by
// the workflow code of the checkout, saved as `<workflow>.<scenario>.json`. Record anew only from the code
// whose histories must keep replaying (before a change to a workflow's commands), after a build:
//   npm run test:only -- dist/test/workflows/histories/record.js
import { Worker } from '@temporalio/worker';
import { getStack, startTimeSkipping } from '../../harness/stack';
import { saveHistory } from './history-files';
import { historyFile, jobStubs, RECORDED_WORKFLOWS, runScenario, scenariosOf } from './scenarios';

describe('record the histories of the workflows in a frame', function () {
  this.timeout(300_000);

  it('runs every scenario and saves its history', async () => {
    const ts = await startTimeSkipping();
    const { activities, working } = jobStubs();
    const taskQueue = 'tarmac-record-histories';
    try {
      const worker = await Worker.create({
        connection: ts.env.nativeConnection,
        namespace: ts.env.namespace ?? 'default',
        taskQueue,
        workflowBundle: getStack().workflowBundle,
        activities,
      });
      await worker.runUntil(async () => {
        for (const workflow of RECORDED_WORKFLOWS) {
          for (const scenario of scenariosOf(workflow)) {
            const { handle, result } = await runScenario(ts.env.client, taskQueue, workflow, scenario, working);
            await saveHistory(handle, historyFile(workflow, scenario));
            console.log(`${historyFile(workflow, scenario)}: ${JSON.stringify(result)}`);
          }
        }
      });
    } finally {
      await ts.stop();
    }
  });
});

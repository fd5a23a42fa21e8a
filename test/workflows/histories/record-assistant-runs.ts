// Records the assistant run workflow's histories (assistant-runs.ts) from the workflow code of the checkout.
import { getStack, startTimeSkipping } from '../../harness/stack';
import { ASSISTANT_RUN_SCENARIOS, assistantRunHistoryFile, runAssistantScenario } from './assistant-runs';
import { saveHistory } from './history-files';

describe('record the histories of the assistant run workflow', function () {
  this.timeout(300_000);

  it('runs every scenario and saves its history', async () => {
    getStack();
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        for (const scenario of ASSISTANT_RUN_SCENARIOS) {
          const { handle, status } = await runAssistantScenario(ts.env.client, scenario);
          await saveHistory(handle, assistantRunHistoryFile(scenario));
          console.log(`${assistantRunHistoryFile(scenario)}: ${status}`);
        }
      });
    } finally {
      await ts.stop();
    }
  });
});

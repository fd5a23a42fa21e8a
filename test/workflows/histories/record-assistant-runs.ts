// Records the assistant run workflow's histories (assistant-runs.ts) from the workflow code of the checkout: every
// scenario, or those RECORD_SCENARIOS names (comma-separated).
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
        const only = process.env.RECORD_SCENARIOS?.split(',');
        for (const scenario of ASSISTANT_RUN_SCENARIOS) {
          if (only && !only.includes(scenario)) continue;
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

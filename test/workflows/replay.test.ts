// Workflows in flight keep replaying: every history recorded under histories/ (from the code before a change
// to a workflow; see histories/record.ts) replays without a nondeterminism error on today's workflow code.
import fs from 'node:fs';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { getStack } from '../harness/stack';
import { ASSISTANT_RUN_SCENARIOS, assistantRunHistoryFile } from './histories/assistant-runs';
import { HISTORIES_DIR, loadHistory } from './histories/history-files';
import { historyFile, RECORDED_WORKFLOWS, scenariosOf } from './histories/scenarios';

describe('recorded workflow histories replay on the current workflow code', function () {
  this.timeout(120_000);
  const recorded = fs.readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'));

  it('has a history of every scenario of every workflow of scenarios.ts and assistant-runs.ts', () => {
    const expected = [
      ...RECORDED_WORKFLOWS.flatMap((w) => scenariosOf(w).map((s) => historyFile(w, s))),
      ...ASSISTANT_RUN_SCENARIOS.map(assistantRunHistoryFile),
    ];
    expect(recorded).to.include.members(expected);
  });

  for (const file of recorded) {
    it(file, async () => {
      await Worker.runReplayHistory({ workflowBundle: getStack().workflowBundle }, loadHistory(file), file);
    });
  }
});

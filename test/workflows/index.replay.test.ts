// Workflows in flight keep replaying: every history recorded under histories/ (from the code before a change
// to a workflow, see histories/record.ts; and from a patched path, see histories/record-patched.ts) replays
// without a nondeterminism error on today's workflow code.
import fs from 'node:fs';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { getStack } from '../harness/stack';
import { ASSISTANT_RUN_SCENARIOS, assistantRunHistoryFile } from './histories/assistant-runs';
import { HISTORIES_DIR, loadHistory } from './histories/history-files';
import {
  historyFile,
  PATCHED_RECORDINGS,
  patchedHistoryFile,
  RECORDED_WORKFLOWS,
  scenariosOf,
} from './histories/scenarios';

describe('recorded workflow histories replay on the current workflow code', function () {
  this.timeout(120_000);
  const recorded = fs.readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'));

  it('has a history of every scenario of every workflow of scenarios.ts and assistant-runs.ts', () => {
    const expected = [
      ...RECORDED_WORKFLOWS.flatMap((w) => scenariosOf(w).map((s) => historyFile(w, s))),
      ...PATCHED_RECORDINGS.flatMap((r) => scenariosOf(r.workflow, r.patch).map((s) => patchedHistoryFile(r, s))),
      ...ASSISTANT_RUN_SCENARIOS.map(assistantRunHistoryFile),
    ];
    expect(recorded).to.include.members(expected);
  });

  it('has the patched paths recorded with their patch, the paths before it without', () => {
    const patchesOf = (file: string) =>
      (loadHistory(file).events ?? []).flatMap((e) => {
        const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
        return data ? [JSON.parse(Buffer.from(data).toString('utf8')).id as string] : [];
      });
    for (const recording of PATCHED_RECORDINGS) {
      for (const scenario of scenariosOf(recording.workflow, recording.patch)) {
        expect(patchesOf(patchedHistoryFile(recording, scenario)), scenario).to.include(recording.patch);
        // A scenario the patch brought (a deployment's cancel signal) has no history from before it.
        if (scenariosOf(recording.workflow).includes(scenario))
          expect(patchesOf(historyFile(recording.workflow, scenario)), scenario).to.not.include(recording.patch);
      }
    }
  });

  for (const file of recorded) {
    it(file, async () => {
      await Worker.runReplayHistory({ workflowBundle: getStack().workflowBundle }, loadHistory(file), file);
    });
  }
});

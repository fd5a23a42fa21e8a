// Records the histories that index.replay.test.ts replays: every scenario of every workflow of scenarios.ts, run by
// the workflow code of the checkout, saved as `<workflow>.<scenario>.json`, those that are not saved yet: a saved
// history is the record of the code it came from. Record only from the code whose histories must keep replaying
// (before a change to a workflow's commands; delete a file to record it anew), after a build:
//   npm run test:only -- dist/test/workflows/histories/record.js
import fs from 'node:fs';
import path from 'node:path';
import { HISTORIES_DIR } from './history-files';
import { recordScenarios } from './recording';
import { historyFile, RECORDED_WORKFLOWS, scenariosOf } from './scenarios';

describe('record the histories of the workflows in a frame', function () {
  this.timeout(300_000);

  it('runs every scenario and saves its history', async () => {
    await recordScenarios(
      'tarmac-record-histories',
      RECORDED_WORKFLOWS.flatMap((workflow) =>
        scenariosOf(workflow).map((scenario) => ({ workflow, scenario, file: historyFile(workflow, scenario) })),
      ).filter(({ file }) => !fs.existsSync(path.join(HISTORIES_DIR, file))),
    );
  });
});

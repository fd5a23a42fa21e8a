// Records the histories of PATCHED_RECORDINGS (scenarios.ts): every scenario of each workflow, run by the
// workflow code of the checkout (which takes the patched path), saved as `<workflow>.<patch>.<scenario>.json`
// beside the histories from before the patch; those not saved yet (delete a file to record it anew). Record
// only from the code whose histories must keep replaying, after a build:
//   npm run test:only -- dist/test/workflows/histories/record-patched.js
import fs from 'node:fs';
import path from 'node:path';
import { HISTORIES_DIR } from './history-files';
import { recordScenarios } from './recording';
import { PATCHED_RECORDINGS, patchedHistoryFile, scenariosOf } from './scenarios';

describe('record the histories of the patched paths of workflows in a frame', function () {
  this.timeout(300_000);

  it('runs every scenario and saves its history', async () => {
    await recordScenarios(
      'tarmac-record-patched-histories',
      PATCHED_RECORDINGS.flatMap((recording) =>
        scenariosOf(recording.workflow, recording.patch).map((scenario) => ({
          workflow: recording.workflow,
          scenario,
          file: patchedHistoryFile(recording, scenario),
        })),
      ).filter(({ file }) => !fs.existsSync(path.join(HISTORIES_DIR, file))),
      { slotGrants: true }, // the builds and runs wait for their slot first (the workflows without one do not ask)
    );
  });
});

// Records the histories that replay.test.ts replays: every scenario of every workflow of scenarios.ts, run by
// the workflow code of the checkout, saved as `<workflow>.<scenario>.json`. Record anew only from the code
// whose histories must keep replaying (before a change to a workflow's commands), after a build:
//   npm run test:only -- dist/test/workflows/histories/record.js
import { recordScenarios } from './recording';
import { historyFile, RECORDED_WORKFLOWS, scenariosOf } from './scenarios';

describe('record the histories of the workflows in a frame', function () {
  this.timeout(300_000);

  it('runs every scenario and saves its history', async () => {
    await recordScenarios(
      'tarmac-record-histories',
      RECORDED_WORKFLOWS.flatMap((workflow) =>
        scenariosOf(workflow).map((scenario) => ({ workflow, scenario, file: historyFile(workflow, scenario) })),
      ),
    );
  });
});

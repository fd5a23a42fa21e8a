// Recorded histories of the assistant run workflow (replayed by index.replay.test.ts): a run that the model answers at
// once, and one cancelled (the api's `cancel` signal) while its model stream stalls. Run with the real
// activities and the model provider double, on the time-skipping server. Record anew only from the code whose
// histories must keep replaying (before a change to the workflow's commands), after a build:
//   npm run test:only -- dist/test/workflows/histories/record-assistant-runs.js
import type { Client } from '@temporalio/client';
import type { Caller } from '../../../src/services/caller';
import { createAssistant } from '../../../src/services/assistants/assistants';
import { createAssistantRun } from '../../../src/services/assistants/runs';
import { cancelRunSignal } from '../../../src/temporal/contracts';
import { workflowIdOf } from '../../../src/temporal/workflow-start';
import { getStack, newTenant } from '../../harness/stack';

export const ASSISTANT_RUN_SCENARIOS = ['succeeded', 'cancelled'] as const;
export type AssistantRunScenario = (typeof ASSISTANT_RUN_SCENARIOS)[number];

export const assistantRunHistoryFile = (scenario: AssistantRunScenario) => `assistantRunWorkflow.${scenario}.json`;

/** Runs one scenario through the api's service on `temporal` (a worker must poll its task queue); the handle. */
export async function runAssistantScenario(temporal: Client, scenario: AssistantRunScenario) {
  const { ds, config, modelProvider: provider } = getStack();
  const t = await newTenant('assistant-history');
  const caller: Caller = {
    organizationId: t.organizationId,
    userId: t.userId,
    apiKeyId: t.userId,
    actor: t.userId,
    runId: null,
    role: 'owner',
  };
  const model = provider.uniqueModel();
  provider.script(
    scenario === 'succeeded' ? { model, text: 'Hello there' } : { model, text: 'never ends', stallAfterChunks: 1 },
  );
  const assistant = await createAssistant(ds, caller, { name: `History ${scenario}` });
  const { run } = await createAssistantRun({ ds, temporal, config }, caller, assistant.assistant_id, {
    input: 'Hi',
    stream: true,
    model: `local/${model}`,
  });
  const handle = temporal.workflow.getHandle(workflowIdOf('assistant-run', run.run_id));
  if (scenario === 'cancelled') {
    await (
      await provider.waitForRequest(model)
    ).stalled;
    await handle.signal(cancelRunSignal, { requestedBy: 'history recorder' });
  }
  return { handle, status: await handle.result() };
}

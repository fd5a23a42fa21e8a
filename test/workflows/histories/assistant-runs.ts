// Recorded histories of the assistant run workflow (replayed by index.replay.test.ts): a run that the model answers at
// once, one cancelled (the api's `cancel` signal) while its model stream stalls, and two whose model calls a tool
// that requires approval (docs/waitpoints.md): rejected by a completion, and refused by the approval's timeout
// (skipped). Run with the real activities and the model provider double, on the time-skipping server. Record
// anew only from the code whose histories must keep replaying (before a change to the workflow's commands), after
// a build, naming the scenarios to record (the others keep their files):
//   RECORD_SCENARIOS=approval-rejected npm run test:only -- dist/test/workflows/histories/record-assistant-runs.js
import type { Client } from '@temporalio/client';
import { createAssistant } from '../../../src/services/assistants/assistants';
import { createAssistantRun } from '../../../src/services/assistants/runs';
import { cancelRunSignal } from '../../../src/temporal/contracts';
import { workflowIdOf } from '../../../src/temporal/workflow-start';
import { getStack, newTenant } from '../../harness/stack';
import { structureWithBuild } from '../../harness/builds';
import { CALCULATOR_TOOL } from '../../harness/runs';
import { Waitpoint } from '../../../src/persistence/entities';
import { completeWaitpoint } from '../../../src/services/waitpoints/waitpoints';
import { ownerCaller } from '../../harness/people';

export const ASSISTANT_RUN_SCENARIOS = ['succeeded', 'cancelled', 'approval-rejected', 'approval-timed-out'] as const;
export type AssistantRunScenario = (typeof ASSISTANT_RUN_SCENARIOS)[number];

export const assistantRunHistoryFile = (scenario: AssistantRunScenario) => `assistantRunWorkflow.${scenario}.json`;

/** Runs one scenario through the api's service on `temporal` (a worker must poll its task queue); the handle. */
export async function runAssistantScenario(temporal: Client, scenario: AssistantRunScenario) {
  const { ds, config, modelProvider: provider } = getStack();
  const t = await newTenant('assistant-history');
  const caller = ownerCaller(t);
  const model = provider.uniqueModel();
  const approval = scenario === 'approval-rejected' || scenario === 'approval-timed-out';
  if (approval)
    provider.script(
      { model, toolCalls: [{ id: 'call_1', name: 'Calculator_divide', arguments: '{"a": 1, "b": 2}' }] },
      { model, text: 'Understood' },
    );
  else
    provider.script(
      scenario === 'succeeded' ? { model, text: 'Hello there' } : { model, text: 'never ends', stallAfterChunks: 1 },
    );
  const toolIds = approval ? [await toolThatRequiresApproval(t.organizationId)] : [];
  const assistant = await createAssistant(ds, caller, { name: `History ${scenario}`, tool_ids: toolIds });
  // Heartbeats come in real time while the server's clock skips the approval's timeout.
  const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7 * 86_400 } };
  const { run } = await createAssistantRun({ ds, temporal, config: limits }, caller, assistant.assistant_id, {
    input: 'Hi',
    stream: true,
    model: `local/${model}`,
  });
  const handle = temporal.workflow.getHandle(workflowIdOf('assistant-run', run.run_id));
  if (scenario === 'approval-rejected') {
    const waitpoint = await waitingWaitpoint(run.run_id);
    await completeWaitpoint({ ds, temporal }, waitpoint, 'history recorder', { approved: false, reason: 'no' });
  }
  if (scenario === 'cancelled') {
    await (
      await provider.waitForRequest(model)
    ).stalled;
    await handle.signal(cancelRunSignal, { requestedBy: 'history recorder' });
  }
  return { handle, status: await handle.result() };
}

async function toolThatRequiresApproval(organizationId: string): Promise<string> {
  const tool = await structureWithBuild(organizationId, {
    kind: 'tool',
    files: { 'tool.py': CALCULATOR_TOOL },
    mainFile: 'tool.py',
    name: 'calc',
  });
  await getStack().ds.query(`UPDATE code_resources SET requires_approval = true WHERE resource_id = $1`, [
    tool.structureId,
  ]);
  return tool.structureId;
}

/** The run's waitpoint once it waits (real time: the clock skips only while a result is awaited). */
export async function waitingWaitpoint(runId: string): Promise<Waitpoint> {
  for (let i = 0; i < 600; i++) {
    const row = await getStack().ds.getRepository(Waitpoint).findOneBy({ run_id: runId });
    if (row) return row;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} never waited for approval`);
}

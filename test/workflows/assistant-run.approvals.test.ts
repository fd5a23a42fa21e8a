// The assistant run workflow's approvals (docs/waitpoints.md) with time skipping: a call of a tool that requires
// approval waits on its waitpoint for the `waitpointCompleted` signal, holding nothing. Its own timeout (24 h by
// default, skipped) refuses the call and the run goes on, its time limit (an hour) not counting the wait; of two
// completions the first wins; a workflow cancellation (Temporal UI) while it waits ends the run and the waitpoint.
import { expect } from 'chai';
import type { WorkflowHandle } from '@temporalio/client';
import type { Config } from '../../src/config';
import { Run, Waitpoint } from '../../src/persistence/entities';
import { createAssistantRun } from '../../src/services/assistants/runs';
import { createAssistant } from '../../src/services/assistants/assistants';
import { completeWaitpoint } from '../../src/services/waitpoints/waitpoints';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../harness/builds';
import { CALCULATOR_TOOL } from '../harness/runs';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { waitingWaitpoint } from './histories/assistant-runs';
import { ownerCaller } from '../harness/people';

const callerOf = ownerCaller;

/** A tenant with a calculator tool that requires approval, an assistant with it, and the model's call of it. */
async function approvalSetup() {
  const { ds, modelProvider: provider } = getStack();
  const t = await newTenant();
  const tool = await structureWithBuild(t.organizationId, {
    kind: 'tool',
    files: { 'tool.py': CALCULATOR_TOOL },
    mainFile: 'tool.py',
    name: 'calc',
  });
  await ds.query(`UPDATE code_resources SET requires_approval = true WHERE resource_id = $1`, [tool.structureId]);
  const assistant = await createAssistant(ds, callerOf(t), { name: 'Careful', tool_ids: [tool.structureId] });
  const model = provider.uniqueModel();
  provider.script(
    { model, toolCalls: [{ id: 'call_1', name: 'Calculator_divide', arguments: '{"a": 1, "b": 2}' }] },
    { model, respond: (body) => ({ text: `The tool said: ${body.messages.at(-1)!.content}` }) },
  );
  return { t, assistant, model };
}

/**
 * On a time-skipping worker: an assistant run whose model calls the tool, and `scenario` once it waits on its
 * waitpoint. `config`: the run's settings (default: the stack's).
 */
async function whileItWaits(
  scenario: (w: {
    ts: Awaited<ReturnType<typeof startTimeSkipping>>;
    runId: string;
    waitpoint: Waitpoint;
    handle: WorkflowHandle;
  }) => Promise<void>,
  config: Config = getStack().config,
) {
  const { ds } = getStack();
  const { t, assistant, model } = await approvalSetup();
  const ts = await startTimeSkipping();
  try {
    await ts.runWorker(async () => {
      const { run } = await createAssistantRun(
        { ds, temporal: ts.env.client, config },
        callerOf(t),
        assistant.assistant_id,
        { input: 'Divide', model: `local/${model}` },
      );
      const waitpoint = await waitingWaitpoint(run.run_id);
      const handle = ts.env.client.workflow.getHandle(workflowIdOf('assistant-run', run.run_id));
      await scenario({ ts, runId: run.run_id, waitpoint, handle });
    });
  } finally {
    await ts.stop();
  }
}

describe('assistant run workflow: approvals', function () {
  this.timeout(120_000);

  it("times out after its own timeout (24 h by default) as a refusal; the run's time limit does not count the wait", async () => {
    const { ds, config } = getStack();
    expect(config.approvalTimeoutSeconds).to.be.greaterThan(config.runJob.timeLimitSeconds);
    // Heartbeats come in real time while the server's clock skips: the heartbeat timeout must outlast the skip.
    const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7 * 86_400 } };
    await whileItWaits(async ({ runId, waitpoint, handle }) => {
      expect(waitpoint.timeout_seconds).to.equal(config.approvalTimeoutSeconds);
      expect(await handle.result()).to.equal('SUCCEEDED');
      const after = await ds.getRepository(Run).findOneByOrFail({ run_id: runId });
      expect(after.output).to.deep.include({
        value: `The tool said: Error: The call of Calculator_divide was not approved within ${config.approvalTimeoutSeconds} s`,
      });
      expect(after.status_detail).to.deep.equal({ reason: 'Completed', message: null });
      const settled = await ds.getRepository(Waitpoint).findOneByOrFail({ waitpoint_id: waitpoint.waitpoint_id });
      expect(settled.status).to.equal('TIMED_OUT');
      const timers = ((await handle.fetchHistory()).events ?? []).map((e) =>
        Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0),
      );
      expect(timers, 'the wait is one timer of its timeout').to.include(config.approvalTimeoutSeconds);
    }, limits);
  });

  it('an approval with edited arguments runs the call with them, as a child tool run, and the run answers', async () => {
    const { ds } = getStack();
    await whileItWaits(async ({ ts, runId, waitpoint, handle }) => {
      await completeWaitpoint({ ds, temporal: ts.env.client }, waitpoint, 'approver', {
        approved: true,
        arguments: { a: 9, b: 3 },
      });
      expect(await handle.result()).to.equal('SUCCEEDED');
      const after = await ds.getRepository(Run).findOneByOrFail({ run_id: runId });
      expect(after.output).to.deep.include({ value: 'The tool said: 3.0' });
      const [started] = await ds.query(
        `SELECT payload FROM run_events WHERE run_id = $1 AND type = 'AssistantToolCallStarted'`,
        [runId],
      );
      const child = await ds.getRepository(Run).findOneByOrFail({ run_id: started.payload.run_id });
      expect(child).to.deep.include({ status: 'SUCCEEDED', input: { activity: 'divide', params: { a: 9, b: 3 } } });
    });
  });

  it('of two completions the first wins: a rejection, then an approval that changes nothing', async () => {
    const { ds } = getStack();
    await whileItWaits(async ({ ts, runId, waitpoint, handle }) => {
      const deps = { ds, temporal: ts.env.client };
      const first = await completeWaitpoint(deps, waitpoint, 'first', { approved: false, reason: 'no' });
      expect(first).to.deep.include({ status: 'COMPLETED', completed_by: 'first' });
      const second = await completeWaitpoint(deps, first, 'second', { approved: true });
      expect(second.completion).to.deep.equal({ approved: false, reason: 'no' });
      expect(await handle.result()).to.equal('SUCCEEDED');
      const after = await ds.getRepository(Run).findOneByOrFail({ run_id: runId });
      expect(after.output).to.deep.include({
        value: 'The tool said: Error: The call of Calculator_divide was rejected by first: no',
      });
    });
  });

  it('a workflow cancellation (Temporal UI) while it waits ends the run CANCELLED and its waitpoint CANCELLED', async () => {
    const { ds } = getStack();
    await whileItWaits(async ({ runId, waitpoint, handle }) => {
      await handle.cancel();
      await handle.result().then(
        () => expect.fail('the workflow should close cancelled'),
        (err) => expect(String(err)).to.match(/cancel/i),
      );
      expect((await ds.getRepository(Run).findOneByOrFail({ run_id: runId })).status).to.equal('CANCELLED');
      const after = await ds.getRepository(Waitpoint).findOneByOrFail({ waitpoint_id: waitpoint.waitpoint_id });
      expect(after.status).to.equal('CANCELLED');
      expect(after.completion).to.deep.equal({ approved: false, reason: 'The run ended CANCELLED' });
    });
  });
});

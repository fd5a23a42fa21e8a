// The assistant run workflow's own guarantees: its time limit is a workflow timer (proved with time
// skipping) that also aborts a stalled model stream, and a Temporal workflow cancellation (Temporal UI)
// ends the run CANCELLED like the api's cancel. A run whose attempt its retry policy retries waits its backoff
// on a workflow timer (skipped) and runs again from the start as the same run; a model step whose every activity
// attempt timed out (its worker silent: a stub that never heartbeats) ends the attempt ERROR WorkerLost.
import { expect } from 'chai';
import { createActivities } from '../../activities';
import { Run } from '../../src/persistence/entities';
import { createAssistantRun } from '../../src/services/assistants/runs';
import { createAssistant } from '../../src/services/assistants/assistants';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { as } from '../harness/client';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { startStubbedWorker } from '../harness/stubbed-worker';
import { skipWhileActivityRuns } from '../support/time-skipping';
import { ownerCaller } from '../harness/people';

const callerOf = ownerCaller;

describe('assistant run workflow', function () {
  this.timeout(120_000);

  it('ends a run past its time limit ERROR by the workflow timer, aborting the stalled model stream', async () => {
    const { ds, config, modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, text: 'a b c d e f', stallAfterChunks: 2 });
    const assistant = await createAssistant(ds, callerOf(t), { name: 'Slow' });
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        // Heartbeats come in real time while the server's clock skips: the heartbeat timeout must outlast the skip.
        const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7200 } };
        const { run } = await createAssistantRun(
          { ds, temporal: ts.env.client, config: limits },
          callerOf(t),
          assistant.assistant_id,
          {
            input: 'Go on',
            stream: true,
            model: `local/${model}`,
          },
        );
        const request = await provider.waitForRequest(model);
        await request.stalled;
        await skipWhileActivityRuns(ts.env, (config.runJob.timeLimitSeconds + 1) * 1000);
        const status = await ts.env.client.workflow.getHandle(workflowIdOf('assistant-run', run.run_id)).result();
        expect(status).to.equal('ERROR');
        const after = await ds.getRepository(Run).findOneByOrFail({ run_id: run.run_id });
        expect(after.status_detail).to.deep.equal({
          reason: 'TimeLimitExceeded',
          error: `Run exceeded its time limit of ${config.runJob.timeLimitSeconds} s`,
        });
        expect(await request.ended).to.equal('disconnected');
      });
    } finally {
      await ts.stop();
    }
  });

  it('ends CANCELLED when the workflow itself is cancelled (Temporal UI), and the workflow closes cancelled', async () => {
    const { env, modelProvider: provider } = getStack();
    const t = await newTenant();
    const api = as(t.key);
    const model = provider.uniqueModel();
    provider.script({ model, text: 'never finished', stallAfterChunks: 1 });
    const assistant = await api.post('/api/assistants', { name: 'Stuck' });
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'x',
      stream: true,
      model: `local/${model}`,
    });
    const request = await provider.waitForRequest(model);
    await request.stalled;
    const handle = env.client.workflow.getHandle(workflowIdOf('assistant-run', created.body.assistant_run_id));
    await handle.cancel();
    await handle.result().then(
      () => expect.fail('the workflow should close cancelled'),
      (err) => expect(String(err)).to.match(/cancel/i),
    );
    expect(await request.ended).to.equal('disconnected');
    const run = await api.get(`/api/assistant-runs/${created.body.assistant_run_id}`);
    expect(run.body.status).to.equal('CANCELLED');
    expect(run.body.status_detail).to.include({ requested_by: 'Temporal workflow cancellation' });
    expect((await handle.describe()).status.name).to.equal('CANCELLED');
  });

  it('retries an attempt its policy retries after its backoff, a workflow timer, as the same run', async () => {
    const { ds, config, modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, error: { status: 400, message: 'refused once' } }, { model, text: 'second time lucky' });
    const assistant = await createAssistant(ds, callerOf(t), { name: 'Retried' });
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        const { run } = await createAssistantRun(
          { ds, temporal: ts.env.client, config },
          callerOf(t),
          assistant.assistant_id,
          {
            input: 'Try',
            model: `local/${model}`,
            retry_policy: { max_attempts: 2, initial_interval: 1234, on: ['Failed'] },
          },
        );
        const handle = ts.env.client.workflow.getHandle(workflowIdOf('assistant-run', run.run_id));
        expect(await handle.result()).to.equal('SUCCEEDED');
        const timers = ((await handle.fetchHistory()).events ?? [])
          .map((e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0))
          .filter((seconds) => seconds === 1234);
        expect(timers, 'the backoff is one workflow timer of initial_interval').to.have.length(1);
        const after = await ds.getRepository(Run).findOneByOrFail({ run_id: run.run_id });
        expect(after.attempt).to.equal(2);
        expect(after.attempts.map((a) => [a.attempt, a.status, a.reason])).to.deep.equal([
          [1, 'FAILED', 'ModelRequestRejected'],
        ]);
        expect(after.output).to.deep.include({ value: 'second time lucky' });
        expect(provider.requestsFor(model)).to.have.length(2);
      });
    } finally {
      await ts.stop();
    }
  });

  it('ends an attempt whose model step timed out on every activity attempt WorkerLost, which its policy retries', async () => {
    const { ds, config, modelProvider: provider } = getStack();
    const t = await newTenant();
    const model = provider.uniqueModel();
    provider.script({ model, text: 'back again' });
    const assistant = await createAssistant(ds, callerOf(t), { name: 'Lost' });
    const ts = await startTimeSkipping();
    const real = createActivities({ ...getStack().activityDeps, temporal: ts.env.client });
    let silent = 0;
    const worker = await startStubbedWorker(ts, {
      taskQueue: config.temporal.taskQueue,
      stubs: {
        // The first attempt's model step: a worker that never heartbeats, three times (the activity's attempts).
        async assistantModelStep(input: { runId: string; step: number }) {
          const run = await ds.getRepository(Run).findOneByOrFail({ run_id: input.runId });
          if (run.attempt > 1) return real.assistantModelStep(input);
          silent++;
          await new Promise((resolve) => setTimeout(resolve, 4000));
          return { kind: 'answer' as const }; // too late: the server timed this attempt out
        },
      },
    });
    try {
      const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 1 } };
      const { run } = await createAssistantRun(
        { ds, temporal: ts.env.client, config: limits },
        callerOf(t),
        assistant.assistant_id,
        { input: 'Hello?', model: `local/${model}`, retry_policy: { max_attempts: 2, initial_interval: 5 } },
      );
      const handle = ts.env.client.workflow.getHandle(workflowIdOf('assistant-run', run.run_id));
      expect(await handle.result()).to.equal('SUCCEEDED');
      expect(silent, 'the activity was tried three times before the attempt ended').to.equal(3);
      const after = await ds.getRepository(Run).findOneByOrFail({ run_id: run.run_id });
      expect(after.attempt).to.equal(2);
      expect(after.attempts).to.have.length(1);
      expect(after.attempts[0]).to.deep.include({ attempt: 1, status: 'ERROR', reason: 'WorkerLost' });
      expect(after.attempts[0].message).to.match(/^The worker running this run stopped/);
      expect(after.output).to.deep.include({ value: 'back again' });
    } finally {
      await worker.stop();
      await ts.stop();
    }
  });
});

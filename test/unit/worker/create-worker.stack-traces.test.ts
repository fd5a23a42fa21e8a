// Workflow stack traces (the `__stack_trace` query behind the Temporal UI's Stack Trace tab) are off unless
// TEMPORAL_WORKFLOW_STACK_TRACES is true: the SDK's promise hook that collects them takes a source-mapped stack
// trace of every promise a workflow makes (patches/@temporalio+worker+*.patch; docs/configuration.md). createWorker
// hands the setting to the SDK (src/worker/create-worker.ts); the second test bundles the frame probe of
// test/workflows/run-scope-workflows.ts.
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { workflowIdOf } from '../../../src/temporal/workflow-start';
import { structureWithBuild } from '../../harness/builds';
import { as } from '../../harness/client';
import { SLEEP_PROGRAM, waitForRun } from '../../harness/runs';
import { getStack, newTenant } from '../../harness/stack';
import type { FrameProbe } from '../../workflows/run-scope-workflows';

const STACK_TRACE_QUERY = '__stack_trace';

describe('workflow stack traces', function () {
  this.timeout(120_000);

  it('are off by default: the query of a running run answers that they are not enabled', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const created = await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['600'] });
    expect(created.status, created.text).to.equal(201);
    const runId = created.body.structure_run_id as string;
    await waitForRun(t.key, runId, (r) => r.status === 'RUNNING');
    const handle = getStack().env.client.workflow.getHandle(workflowIdOf('structure-run', runId));
    let refused: Error | undefined;
    await handle.query(STACK_TRACE_QUERY).catch((err: Error) => (refused = err));
    expect(refused?.message).to.match(/stack traces are not enabled/);
    expect((await as(t.key).post(`/api/structure-runs/${runId}/cancel`, {})).status).to.equal(200);
  });

  it('are collected with TEMPORAL_WORKFLOW_STACK_TRACES=true (a worker started with it)', async () => {
    const { env } = getStack();
    const taskQueue = 'tarmac-test-stack-traces';
    const bundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows/run-scope-workflows'),
      logger: new DefaultLogger('WARN'),
    });
    const before = process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
    // As createWorker sets it from the configuration: the worker's new workflow thread reads it as it starts.
    process.env.TEMPORAL_WORKFLOW_STACK_TRACES = 'true';
    let worker: Worker;
    try {
      worker = await Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        workflowBundle: bundle,
        activities: {},
      });
    } finally {
      // Assigning undefined would store the string "undefined".
      if (before === undefined) delete process.env.TEMPORAL_WORKFLOW_STACK_TRACES;
      else process.env.TEMPORAL_WORKFLOW_STACK_TRACES = before;
    }
    const probe: FrameProbe = {
      frame: 'withinLimit',
      timeLimitSeconds: 3600,
      startTimer: false,
      waitSeconds: 3600,
      outcome: 'ending',
    };
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('frameProbeWorkflow', {
        taskQueue,
        workflowId: `stack-traces-${Date.now()}`,
        args: [probe],
      });
      try {
        // Answered once the first workflow task has run: the probe waits on its hour-long timer.
        let trace = '';
        for (const deadline = Date.now() + 30_000; !trace.includes('frameProbeWorkflow') && Date.now() < deadline;)
          trace = await handle.query<string>(STACK_TRACE_QUERY);
        expect(trace).to.include('frameProbeWorkflow');
        expect(trace).to.include('run-scope-workflows');
      } finally {
        await handle.terminate('the test is done');
      }
    });
  });
});

// The frames of workflows/run-scope.ts, every branch, with stubbed activities on the time-skipping server (as
// temporalio/samples-typescript's hello-world mocha test does): test-only workflows (run-scope-workflows.ts)
// put a piece of work in `withinLimit`, `runToEnding` or `jobToEnding`; the time limits are workflow timers,
// so an hour-long wait ends in milliseconds. Then the three job workflows, each way they end, with stubbed
// activities: the ending each writes is the one the code before `jobToEnding` wrote (the recorded histories; a
// deployment's cancel signal, which came later, as its patch's recording wrote it).
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { cancelRunSignal } from '../../src/temporal/contracts';
import { getStack, startTimeSkipping } from '../harness/stack';
import { loadHistory } from './histories/history-files';
import {
  currentScenariosOf,
  historyFile,
  jobStubs,
  PATCHED_RECORDINGS,
  patchedHistoryFile,
  RECORDED_WORKFLOWS,
  runScenario,
  scenariosOf,
  type RecordedWorkflow,
  type Scenario,
} from './histories/scenarios';
import type { FrameProbe, ProbeActivities } from './run-scope-workflows';

const PROBES = 'tarmac-test-run-scope';
const JOBS = 'tarmac-test-job-endings';

/** What the terminal write of a recorded history received (undefined when there was none). */
function recordedEnding(file: string): unknown {
  const scheduled = (loadHistory(file).events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes)
    .find((a) => a?.activityType?.name?.startsWith('finish'));
  const data = scheduled?.input?.payloads?.[0]?.data;
  if (!data) return undefined;
  const input = JSON.parse(Buffer.from(data).toString('utf8'));
  return input.ending ?? input.outcome;
}

describe('the run frame (workflows/run-scope.ts) with stubbed activities', function () {
  this.timeout(120_000);
  let ts: Awaited<ReturnType<typeof startTimeSkipping>>;
  const finished = new Map<string, unknown[]>();
  const jobs = jobStubs();
  let workers: Worker[] = [];
  let running: Promise<unknown>;

  const probeActivities: ProbeActivities = {
    async probeWork({ outcome, failureType }) {
      if (outcome === 'missing') return undefined;
      if (outcome === 'activity-fails') {
        throw failureType
          ? ApplicationFailure.nonRetryable('the work failed', failureType)
          : ApplicationFailure.create({ message: 'the work failed', nonRetryable: true });
      }
      return { status: 'SUCCEEDED', message: null };
    },
    async probeFinish({ ending }) {
      const workflowId = Context.current().info.workflowExecution!.workflowId;
      finished.set(workflowId, [...(finished.get(workflowId) ?? []), ending]);
      return typeof ending === 'string' ? ending : (ending as { status: string }).status;
    },
  };

  before(async () => {
    ts = await startTimeSkipping();
    const connection = ts.env.nativeConnection;
    const namespace = ts.env.namespace ?? 'default';
    const probeBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('./run-scope-workflows'),
      logger: new DefaultLogger('WARN'),
    });
    workers = [
      await Worker.create({
        connection,
        namespace,
        taskQueue: PROBES,
        workflowBundle: probeBundle,
        activities: probeActivities,
      }),
      await Worker.create({
        connection,
        namespace,
        taskQueue: JOBS,
        workflowBundle: getStack().workflowBundle,
        activities: jobs.activities,
      }),
    ];
    running = Promise.all(workers.map((w) => w.run()));
  });

  after(async () => {
    for (const w of workers) w.shutdown();
    await running;
    await ts?.stop();
  });

  let probes = 0;
  /**
   * Runs a probe; `during` acts on it once started (signals, cancellation). Answers the workflow's result (or
   * 'workflow cancelled'), the terminal writes it made, and how long it took in real time.
   */
  async function probe(
    p: FrameProbe,
    during?: (h: { signal: (requestedBy: string) => Promise<void>; cancel: () => Promise<unknown> }) => Promise<void>,
  ) {
    const workflowId = `probe-${++probes}-${p.frame}`;
    const started = Date.now();
    const handle = await ts.env.client.workflow.start('frameProbeWorkflow', {
      taskQueue: PROBES,
      workflowId,
      args: [p],
    });
    const signal = (requestedBy: string) => handle.signal(cancelRunSignal, { requestedBy });
    await during?.({ signal, cancel: () => handle.cancel() });
    const result = await handle.result().catch((err: Error) => {
      if ((err.cause as Error | undefined)?.name === 'CancelledFailure') return 'workflow cancelled';
      throw err;
    });
    return { result, writes: finished.get(workflowId) ?? [], ms: Date.now() - started };
  }

  const HOUR = 3600;
  const limited = { timeLimitSeconds: 60, startTimer: true };

  describe('withinLimit', () => {
    it('writes the ending the work answers and returns what the write answered', async () => {
      const r = await probe({ frame: 'withinLimit', ...limited, outcome: 'ending' });
      expect(r.writes).to.deep.equal([{ status: 'SUCCEEDED', message: null }]);
      expect(r.result).to.equal('SUCCEEDED');
    });

    it('answers MISSING without a terminal write when the work has nothing to end', async () => {
      const r = await probe({ frame: 'withinLimit', ...limited, outcome: 'missing' });
      expect(r.result).to.equal('MISSING');
      expect(r.writes).to.deep.equal([]);
    });

    it('ends the work that outlasts its time limit (a workflow timer): timedOut, in milliseconds', async () => {
      const r = await probe({ frame: 'withinLimit', ...limited, waitSeconds: HOUR, outcome: 'ending' });
      expect(r.writes).to.deep.equal(['timed out']);
      expect(r.result).to.equal('timed out');
      expect(r.ms).to.be.below(10_000);
    });

    it('sets no limit until the work starts the timer', async () => {
      const r = await probe({
        frame: 'withinLimit',
        timeLimitSeconds: 60,
        startTimer: false,
        waitSeconds: HOUR,
        outcome: 'ending',
      });
      expect(r.writes).to.deep.equal([{ status: 'SUCCEEDED', message: null }]);
    });

    it('a cancel signal cancels the work: cancelled by whoever asked first', async () => {
      const r = await probe(
        { frame: 'withinLimit', ...limited, cancelSignal: true, waitSeconds: HOUR, outcome: 'ending' },
        async ({ signal }) => {
          await signal('user-1');
          await signal('user-2');
        },
      );
      expect(r.writes).to.deep.equal(['cancelled by user-1']);
      expect(r.result).to.equal('cancelled by user-1');
    });

    it('without cancelSignal a cancel signal changes nothing', async () => {
      const r = await probe(
        { frame: 'withinLimit', timeLimitSeconds: 60, startTimer: false, waitSeconds: HOUR, outcome: 'ending' },
        async ({ signal }) => signal('user-1'),
      );
      expect(r.writes).to.deep.equal([{ status: 'SUCCEEDED', message: null }]);
    });

    it('a workflow cancellation ends the work cancelled, writes it, then closes the workflow cancelled', async () => {
      const r = await probe(
        { frame: 'withinLimit', ...limited, cancelSignal: true, waitSeconds: HOUR, outcome: 'ending' },
        async ({ cancel }) => {
          await cancel();
        },
      );
      expect(r.writes).to.deep.equal(['cancelled by Temporal workflow cancellation']);
      expect(r.result).to.equal('workflow cancelled');
    });

    it('a failed activity becomes the failed ending', async () => {
      const r = await probe({ frame: 'withinLimit', ...limited, outcome: 'activity-fails', failureType: 'Broken' });
      expect(r.writes).to.deep.equal(['failed: the work failed']);
    });

    it('an error of the workflow code itself becomes the failed ending too', async () => {
      const r = await probe({ frame: 'withinLimit', ...limited, outcome: 'workflow-throws' });
      expect(r.writes).to.deep.equal(['failed: the workflow code broke']);
    });
  });

  describe('runToEnding', () => {
    it('the time limit ends the run ERROR TimeLimitExceeded', async () => {
      const r = await probe({ frame: 'runToEnding', ...limited, waitSeconds: HOUR, outcome: 'ending' });
      expect(r.writes).to.deep.equal([
        { status: 'ERROR', reason: 'TimeLimitExceeded', error: 'Run exceeded its time limit of 60 s' },
      ]);
      expect(r.result).to.equal('ERROR');
    });

    it('a cancel signal ends it CANCELLED with who asked', async () => {
      const r = await probe({ frame: 'runToEnding', ...limited, waitSeconds: HOUR, outcome: 'ending' }, ({ signal }) =>
        signal('user-1').then(() => undefined),
      );
      expect(r.writes).to.deep.equal([{ status: 'CANCELLED', requestedBy: 'user-1' }]);
    });

    it('a workflow cancellation ends it CANCELLED by the Temporal workflow cancellation', async () => {
      const r = await probe({ frame: 'runToEnding', ...limited, waitSeconds: HOUR, outcome: 'ending' }, ({ cancel }) =>
        cancel().then(() => undefined),
      );
      expect(r.writes).to.deep.equal([{ status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' }]);
      expect(r.result).to.equal('workflow cancelled');
    });

    it('a failure of one of failedTypes ends it FAILED, any other type ERROR, with the type as reason', async () => {
      const refused = await probe({
        frame: 'runToEnding',
        ...limited,
        outcome: 'activity-fails',
        failureType: 'ModelRequestRejected',
      });
      expect(refused.writes).to.deep.equal([
        { status: 'FAILED', reason: 'ModelRequestRejected', error: 'the work failed' },
      ]);
      const broken = await probe({
        frame: 'runToEnding',
        ...limited,
        outcome: 'activity-fails',
        failureType: 'Broken',
      });
      expect(broken.writes).to.deep.equal([{ status: 'ERROR', reason: 'Broken', error: 'the work failed' }]);
    });

    it('a failure without a type ends it ERROR ExecutionFailed', async () => {
      const r = await probe({ frame: 'runToEnding', ...limited, outcome: 'workflow-throws' });
      expect(r.writes).to.deep.equal([
        {
          status: 'ERROR',
          reason: 'ExecutionFailed',
          error: 'The run could not be executed: the workflow code broke',
        },
      ]);
    });
  });

  describe('jobToEnding', () => {
    it('the time limit ends the job FAILED TimeLimitExceeded, naming its subject', async () => {
      const r = await probe({ frame: 'jobToEnding', ...limited, waitSeconds: HOUR, outcome: 'ending' });
      expect(r.writes).to.deep.equal([
        { status: 'FAILED', reason: 'TimeLimitExceeded', message: 'The probe exceeded its time limit of 60 s' },
      ]);
      expect(r.result).to.equal('FAILED');
    });

    it('a cancel signal ends it CANCELLED with who asked; a workflow cancellation too', async () => {
      const signalled = await probe(
        { frame: 'jobToEnding', ...limited, waitSeconds: HOUR, outcome: 'ending' },
        ({ signal }) => signal('user-1').then(() => undefined),
      );
      expect(signalled.writes).to.deep.equal([{ status: 'CANCELLED', requestedBy: 'user-1' }]);
      const cancelled = await probe(
        { frame: 'jobToEnding', ...limited, waitSeconds: HOUR, outcome: 'ending' },
        ({ cancel }) => cancel().then(() => undefined),
      );
      expect(cancelled.writes).to.deep.equal([{ status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' }]);
      expect(cancelled.result).to.equal('workflow cancelled');
    });

    it("a failure ends it FAILED with the failure's type, or failedReason when it has none", async () => {
      const typed = await probe({ frame: 'jobToEnding', ...limited, outcome: 'activity-fails', failureType: 'Broken' });
      expect(typed.writes).to.deep.equal([{ status: 'FAILED', reason: 'Broken', message: 'the work failed' }]);
      const untyped = await probe({ frame: 'jobToEnding', ...limited, outcome: 'activity-fails' });
      expect(untyped.writes).to.deep.equal([{ status: 'FAILED', reason: 'ProbeFailed', message: 'the work failed' }]);
      const thrown = await probe({ frame: 'jobToEnding', ...limited, outcome: 'workflow-throws' });
      expect(thrown.writes).to.deep.equal([
        { status: 'FAILED', reason: 'ProbeFailed', message: 'the workflow code broke' },
      ]);
    });

    it('answers MISSING without a terminal write when there is no job', async () => {
      const r = await probe({ frame: 'jobToEnding', ...limited, outcome: 'missing' });
      expect(r.result).to.equal('MISSING');
      expect(r.writes).to.deep.equal([]);
    });
  });

  describe('the workflows in a frame end as they did before jobToEnding', () => {
    const limit = 'exceeded its time limit of 2 s';
    const expected: Record<RecordedWorkflow, Partial<Record<Scenario, unknown>>> = {
      dataJobWorkflow: {
        succeeded: {
          status: 'SUCCEEDED',
          errors: [],
          bytesIngested: 42,
          stats: { items: 1 },
          knowledgeBaseJobIds: ['kb-job-1'],
        },
        failed: { status: 'FAILED', reason: 'SourceRefused', message: 'the source refused' },
        'timed-out': { status: 'FAILED', reason: 'TimeLimitExceeded', message: `Job ${limit}` },
        cancelled: { status: 'CANCELLED', requestedBy: 'user-1' },
        'workflow-cancelled': { status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' },
        missing: undefined,
      },
      knowledgeBaseJobWorkflow: {
        succeeded: { status: 'SUCCEEDED', errors: [], bytesIngested: 42, stats: { chunks: 3 } },
        failed: { status: 'FAILED', reason: 'SourceRefused', message: 'the source refused' },
        'timed-out': { status: 'FAILED', reason: 'TimeLimitExceeded', message: `Job ${limit}` },
        cancelled: { status: 'CANCELLED', requestedBy: 'user-1' },
        'workflow-cancelled': { status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' },
        missing: undefined,
      },
      integrationDeliveryWorkflow: {
        succeeded: { status: 'SUCCEEDED' },
        failed: { status: 'FAILED', reason: 'CodehostAppError', message: 'no token' },
        'timed-out': { status: 'FAILED', reason: 'TimeLimitExceeded', message: `The delivery's work ${limit}` },
        cancelled: { status: 'CANCELLED', requestedBy: 'user-1' },
        'workflow-cancelled': { status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' },
        missing: undefined,
      },
      deploymentWorkflow: {
        succeeded: {
          status: 'SUCCEEDED',
          buildPath: '/builds/stubbed',
          codeSource: { default: {} },
          fingerprint: null,
          detail: {},
        },
        failed: {
          status: 'ERROR',
          detail: { reason: 'InfrastructureError', message: 'The deployment could not be built: the disk is gone' },
        },
        'timed-out': { status: 'ERROR', detail: { reason: 'TimeLimitExceeded', message: `Deployment ${limit}` } },
        // From DEPLOYMENT_PATCHES_1 on: no CANCELLED status, so ERROR, reason Cancelled, with who asked.
        cancelled: {
          status: 'ERROR',
          detail: { reason: 'Cancelled', message: 'Cancelled by user-1', requested_by: 'user-1' },
        },
        'workflow-cancelled': {
          status: 'ERROR',
          detail: { reason: 'Cancelled', message: 'The deployment workflow was cancelled' },
        },
        missing: undefined,
      },
      codeRunWorkflow: {
        succeeded: { status: 'SUCCEEDED', exitCode: 0, message: null },
        failed: { status: 'ERROR', reason: 'SourceRefused', error: 'the source refused' },
        'timed-out': { status: 'ERROR', reason: 'TimeLimitExceeded', error: `Run ${limit}` },
        cancelled: { status: 'CANCELLED', requestedBy: 'user-1' },
        'workflow-cancelled': { status: 'CANCELLED', requestedBy: 'Temporal workflow cancellation' },
        missing: undefined,
      },
    };
    // The code run's terminal write is a local activity (a marker without its input): its expected ending only.
    const activityTerminalWrite = (workflow: RecordedWorkflow) => workflow !== 'codeRunWorkflow';

    // The history of a scenario: from before the frame, or (one a patch brought) from that patch's code.
    const recordedFile = (workflow: RecordedWorkflow, scenario: Scenario) => {
      if (scenariosOf(workflow).includes(scenario)) return historyFile(workflow, scenario);
      const recording = PATCHED_RECORDINGS.find(
        (r) => r.workflow === workflow && scenariosOf(workflow, r.patch).includes(scenario),
      )!;
      return patchedHistoryFile(recording, scenario);
    };

    for (const workflow of RECORDED_WORKFLOWS) {
      for (const scenario of currentScenariosOf(workflow)) {
        it(`${workflow}: ${scenario}`, async () => {
          const { id, result } = await runScenario(ts.env.client, JOBS, workflow, scenario, jobs.working);
          const ending = jobs.endings.get(id);
          expect(ending).to.deep.equal(expected[workflow][scenario]);
          if (activityTerminalWrite(workflow))
            expect(ending).to.deep.equal(recordedEnding(recordedFile(workflow, scenario)));
          const status = (ending as { status?: string } | undefined)?.status;
          expect(result).to.equal(
            scenario === 'workflow-cancelled' ? 'cancelled' : scenario === 'missing' ? 'MISSING' : status,
          );
        });
      }
    }
  });
});

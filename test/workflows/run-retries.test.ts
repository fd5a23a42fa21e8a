// Retries of lost runs in the run workflow (workflows/run-retries.ts), on the time-skipping server with the real
// status writes and admission (PostgreSQL) and a stubbed process activity that ends each attempt as the test
// says: the backoff waits are workflow timers of the policy's intervals (max_interval caps them), a run is tried
// at most max_attempts times, only the endings named in `on` are retried, each attempt is recorded on the run
// with a RunRetrying event, and a cancel during the wait ends the run CANCELLED without another attempt.
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { expect } from 'chai';
import { Run, RunEvent } from '../../src/persistence/entities';
import { cancelRunSignal, type CodeRunInput, type RunEnding } from '../../src/temporal/contracts';
import { completePolicy, type RetryPolicyRequest } from '../../src/temporal/retry-policy';
import { startOptionsFor } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { startStubbedWorker, type StubbedWorker } from '../harness/stubbed-worker';
import { skipWhileActivityRuns } from '../support/time-skipping';

const QUEUE = 'tarmac-test-retries';
const TIME_LIMIT_SECONDS = 600;

/** How the stubbed process ends an attempt: an ending, or 'hang' (until the time limit cancels it). */
type Script = Array<RunEnding | 'hang'>;

const lost: RunEnding = { status: 'ERROR', reason: 'WorkerLost', error: 'The worker running this run stopped' };
const succeeded: RunEnding = { status: 'SUCCEEDED', exitCode: 0, message: null };
const failed: RunEnding = { status: 'FAILED', exitCode: 3, message: 'The process exited with code 3' };

/** The durations (seconds) of the workflow timers a run started, the time limits left out. */
async function backoffTimers(handle: WorkflowHandle): Promise<number[]> {
  return ((await handle.fetchHistory()).events ?? [])
    .map((e) => e.timerStartedEventAttributes?.startToFireTimeout)
    .filter((d): d is NonNullable<typeof d> => !!d)
    .map((d) => Number(d.seconds ?? 0) + (d.nanos ?? 0) / 1e9)
    .filter((s) => s !== TIME_LIMIT_SECONDS);
}

describe('retries of lost runs in the run workflow (time-skipping)', function () {
  this.timeout(120_000);
  let ts: Awaited<ReturnType<typeof startTimeSkipping>>;
  let worker: StubbedWorker | undefined;
  const scripts = new Map<string, Script>();
  /** Per run, each execution: the run's attempt and status as the activity found them. */
  const executions = new Map<string, Array<{ attempt: number; status: string }>>();

  before(async () => {
    const s = getStack();
    ts = await startTimeSkipping();
    worker = await startStubbedWorker(ts, {
      taskQueue: QUEUE,
      stubs: {
        async executeCodeRun(input: { runId: string }): Promise<RunEnding> {
          const row = await s.ds.getRepository(Run).findOneByOrFail({ run_id: input.runId });
          executions.set(input.runId, [
            ...(executions.get(input.runId) ?? []),
            { attempt: row.attempt, status: row.status },
          ]);
          const next = scripts.get(input.runId)!.shift() ?? succeeded;
          if (next !== 'hang') return next;
          const ctx = Context.current();
          for (;;) {
            ctx.heartbeat();
            await Promise.race([new Promise((r) => setTimeout(r, 100)), ctx.cancelled]);
          }
        },
      },
    });
  });

  after(async () => {
    await worker?.stop();
    await ts?.stop();
  });

  let structureId: string | undefined;
  async function startRun(
    organizationId: string,
    request: RetryPolicyRequest | null,
    script: Script,
  ): Promise<{ runId: string; handle: WorkflowHandle }> {
    const { ds } = getStack();
    structureId ??= (await structureWithBuild(organizationId, { files: { 'structure.py': 'print("stubbed")\n' } }))
      .structureId;
    const completed = request && completePolicy(request);
    if (completed && 'error' in completed) throw new Error(completed.error);
    const retryPolicy = completed ? completed.policy : null;
    const run = await ds.getRepository(Run).save(
      aRun({
        kind: 'structure',
        organization_id: organizationId,
        resource_id: structureId,
        retry_policy: retryPolicy,
      }),
    );
    scripts.set(run.run_id, [...script]);
    const input: CodeRunInput = {
      runId: run.run_id,
      timeLimitSeconds: TIME_LIMIT_SECONDS,
      heartbeatTimeoutSeconds: 3600,
      retryPolicy,
    };
    const handle = await ts.env.client.workflow.start('codeRunWorkflow', {
      ...startOptionsFor({ kind: 'structure-run', id: run.run_id, organizationId, summary: 'test' }, QUEUE),
      args: [input],
    });
    return { runId: run.run_id, handle };
  }

  const rowOf = (runId: string) => getStack().ds.getRepository(Run).findOneByOrFail({ run_id: runId });
  const retryEvents = async (runId: string) =>
    (
      await getStack()
        .ds.getRepository(RunEvent)
        .find({ where: { run_id: runId, type: 'RunRetrying' }, order: { seq: 'ASC' } })
    ).map((e) => e.payload as Record<string, unknown>);

  let tenant: Awaited<ReturnType<typeof newTenant>>;
  before(async () => {
    tenant = await newTenant('retries-wf');
  });

  it('retries a lost attempt after the policy backoff, capped by max_interval, until one succeeds', async () => {
    const policy = { max_attempts: 5, initial_interval: 10, backoff: 3, max_interval: 20, on: ['WorkerLost' as const] };
    const run = await startRun(tenant.organizationId, policy, [lost, lost, lost, succeeded]);
    expect(await run.handle.result()).to.equal('SUCCEEDED');
    expect(await backoffTimers(run.handle), '10 s, then 30 s capped to 20 s twice').to.deep.equal([10, 20, 20]);
    expect(executions.get(run.runId), 'each attempt starts once, from STARTING, knowing its number').to.deep.equal([
      { attempt: 1, status: 'STARTING' },
      { attempt: 2, status: 'STARTING' },
      { attempt: 3, status: 'STARTING' },
      { attempt: 4, status: 'STARTING' },
    ]);
    const row = await rowOf(run.runId);
    expect(row.status).to.equal('SUCCEEDED');
    expect(row.attempt).to.equal(4);
    expect(row.attempts.map((a) => [a.attempt, a.status, a.reason])).to.deep.equal([
      [1, 'ERROR', 'WorkerLost'],
      [2, 'ERROR', 'WorkerLost'],
      [3, 'ERROR', 'WorkerLost'],
    ]);
    const events = await retryEvents(run.runId);
    expect(events.map((e) => [e.attempt, e.reason, e.retry_in_seconds])).to.deep.equal([
      [2, 'WorkerLost', 10],
      [3, 'WorkerLost', 20],
      [4, 'WorkerLost', 20],
    ]);
    const slots = await getStack().ds.query(`SELECT 1 FROM execution_slots WHERE job_id = $1`, [run.runId]);
    expect(slots, 'the slot is given back').to.have.length(0);
  });

  it('ends the run with the last ending once max_attempts are spent', async () => {
    const policy = { max_attempts: 3, initial_interval: 1, backoff: 2 };
    const run = await startRun(tenant.organizationId, policy, [lost, lost, lost, succeeded]);
    expect(await run.handle.result()).to.equal('ERROR');
    expect(executions.get(run.runId)).to.have.length(3);
    expect(await backoffTimers(run.handle)).to.deep.equal([1, 2]);
    const row = await rowOf(run.runId);
    expect(row.attempt).to.equal(3);
    expect(row.status_detail).to.include({ reason: 'WorkerLost' });
    expect(row.attempts).to.have.length(2);
  });

  it('retries only the endings named in `on`', async () => {
    const lostOnly = await startRun(tenant.organizationId, { max_attempts: 3 }, [failed, succeeded]);
    expect(await lostOnly.handle.result(), 'FAILED is not retried by default').to.equal('FAILED');
    expect(executions.get(lostOnly.runId)).to.have.length(1);
    expect(await backoffTimers(lostOnly.handle)).to.deep.equal([]);

    const failedToo = await startRun(tenant.organizationId, { max_attempts: 3, on: ['Failed'] }, [failed, succeeded]);
    expect(await failedToo.handle.result()).to.equal('SUCCEEDED');
    expect((await rowOf(failedToo.runId)).attempts.map((a) => a.status)).to.deep.equal(['FAILED']);

    const notLost = await startRun(tenant.organizationId, { max_attempts: 3, on: ['Failed'] }, [lost, succeeded]);
    expect(await notLost.handle.result(), 'WorkerLost is not in `on`').to.equal('ERROR');
    expect(executions.get(notLost.runId)).to.have.length(1);

    const timedOut = await startRun(tenant.organizationId, { max_attempts: 2, on: ['TimeLimit'] }, ['hang', succeeded]);
    // The test server skips no time while an activity runs: let the time limit pass over the hanging attempt.
    const deadline = Date.now() + 20_000;
    while (!executions.get(timedOut.runId)?.length) {
      if (Date.now() > deadline) throw new Error('the first attempt never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    await skipWhileActivityRuns(ts.env, (TIME_LIMIT_SECONDS + 1) * 1000);
    expect(await timedOut.handle.result()).to.equal('SUCCEEDED');
    expect((await rowOf(timedOut.runId)).attempts.map((a) => a.reason)).to.deep.equal(['TimeLimitExceeded']);
  });

  it('runs without a policy once, as before', async () => {
    const run = await startRun(tenant.organizationId, null, [lost, succeeded]);
    expect(await run.handle.result()).to.equal('ERROR');
    expect(executions.get(run.runId)).to.have.length(1);
    const markerTexts = ((await run.handle.fetchHistory()).events ?? []).flatMap((e) =>
      Object.values(e.markerRecordedEventAttributes?.details ?? {}).flatMap((p) =>
        (p.payloads ?? []).map((x) => Buffer.from(x.data ?? []).toString('utf8')),
      ),
    );
    expect(markerTexts.join(' '), 'no retry patch marker').to.not.include('run-retries');
    expect(await retryEvents(run.runId)).to.deep.equal([]);
  });

  it('ends a run cancelled while it waits for its next attempt CANCELLED, without another attempt', async () => {
    const run = await startRun(tenant.organizationId, { max_attempts: 3, initial_interval: 3600, max_interval: 3600 }, [
      lost,
      succeeded,
    ]);
    const deadline = Date.now() + 20_000;
    while ((await rowOf(run.runId)).attempt !== 2) {
      if (Date.now() > deadline) throw new Error('the run was not retried');
      await new Promise((r) => setTimeout(r, 50));
    }
    await run.handle.signal(cancelRunSignal, { requestedBy: tenant.userId });
    expect(await run.handle.result()).to.equal('CANCELLED');
    expect(executions.get(run.runId)).to.have.length(1);
    const row = await rowOf(run.runId);
    expect(row.status_detail).to.include({ reason: 'Cancelled', requested_by: tenant.userId });
  });
});

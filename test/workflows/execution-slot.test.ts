// The fair share in the run and build workflows (workflows/execution-slot.ts), on the time-skipping server with the
// real admission activities and status writes (PostgreSQL) and a stubbed process activity: a run past its
// organization's share waits QUEUED with no activity running; a release grants it by signal (a queue is
// admitted one by one so, however long its re-asks backed off); a lost signal is made up by the re-try timer
// within its bound; a cancel while waiting ends it CANCELLED without ever executing.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { expect } from 'chai';
import { releaseSlot } from '../../src/jobs/admission';
import { Deployment, Run, RunEvent } from '../../src/persistence/entities';
import {
  cancelRunSignal,
  slotGrantedSignal,
  type CodeRunInput,
  type DeploymentInput,
  type DeploymentOutcome,
  type RunEnding,
} from '../../src/temporal/contracts';
import { startOptionsFor } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { startStubbedWorker, type StubbedWorker } from '../harness/stubbed-worker';

const QUEUE = 'tarmac-test-slots';

/** The event types of a workflow's history, in order (the one `<type>EventAttributes` member of each). */
async function historyOf(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).map(
    (e) =>
      Object.keys(e)
        .find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k])
        ?.replace('EventAttributes', '') ?? '?',
  );
}

/** The local activities of a workflow's history, in order (from their markers). */
const localActivities = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_local_activity' ? marker.details?.data?.payloads?.[0]?.data : undefined;
    return data ? [JSON.parse(Buffer.from(data).toString('utf8')).activity_type as string] : [];
  });

/** The durations of the workflow's timers, in seconds, in the order they were started. */
const timerSeconds = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? []).flatMap((e) => {
    const timeout = e.timerStartedEventAttributes?.startToFireTimeout;
    return timeout ? [Number(timeout.seconds)] : [];
  });

const signalNames = async (handle: WorkflowHandle) =>
  ((await handle.fetchHistory()).events ?? [])
    .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
    .filter(Boolean);

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('execution slots in the run workflow (time-skipping)', function () {
  this.timeout(120_000);
  let ts: Awaited<ReturnType<typeof startTimeSkipping>>;
  /** Runs whose stubbed process activity was started, and how to end each. */
  const executed: string[] = [];
  const release = new Map<string, (e: RunEnding) => void>();
  let worker: StubbedWorker | undefined;

  before(async () => {
    const s = getStack();
    ts = await startTimeSkipping();
    const config = { ...s.config, execution: { ...s.config.execution, orgMaxConcurrentRuns: 1 } };
    worker = await startStubbedWorker(ts, {
      taskQueue: QUEUE,
      config,
      stubs: {
        // The process: runs until the test ends it (a run of HOLD), or ends at once.
        async executeCodeRun(input: { runId: string }): Promise<RunEnding> {
          executed.push(input.runId);
          return new Promise((resolve) => release.set(input.runId, resolve));
        },
        // The build: ends at once (FAILED, so that no build directory is needed).
        async buildDeployment(input: DeploymentInput): Promise<DeploymentOutcome> {
          executed.push(input.deploymentId);
          return { status: 'FAILED', detail: { reason: 'ScriptFailed', message: 'stubbed build' } };
        },
      },
    });
  });

  after(async () => {
    await worker?.stop();
    await ts?.stop();
  });

  const structures = new Map<string, string>();
  async function startRun(organizationId: string): Promise<{ runId: string; handle: WorkflowHandle }> {
    const { ds } = getStack();
    if (!structures.has(organizationId)) {
      const built = await structureWithBuild(organizationId, { files: { 'structure.py': 'print("stubbed")\n' } });
      structures.set(organizationId, built.structureId);
    }
    const run = await ds
      .getRepository(Run)
      .save(aRun({ kind: 'structure', organization_id: organizationId, resource_id: structures.get(organizationId)! }));
    const input: CodeRunInput = { runId: run.run_id, timeLimitSeconds: 3600, heartbeatTimeoutSeconds: 3600 };
    const handle = await ts.env.client.workflow.start('codeRunWorkflow', {
      ...startOptionsFor({ kind: 'structure-run', id: run.run_id, organizationId, summary: 'test' }, QUEUE),
      args: [input],
    });
    return { runId: run.run_id, handle };
  }

  const rowOf = (runId: string) => getStack().ds.getRepository(Run).findOneByOrFail({ run_id: runId });
  const slotOf = async (runId: string) =>
    (await getStack().ds.query(`SELECT state FROM execution_slots WHERE job_id = $1`, [runId]))[0]?.state as
      string | undefined;
  const executing = (runId: string) => until(async () => executed.includes(runId), Boolean, `${runId} executes`);

  /** A slot of the organization held by a job whose workflow does not exist (its signal goes nowhere). */
  async function holdSlot(organizationId: string): Promise<string> {
    const jobId = randomUUID();
    await getStack().ds.query(
      `INSERT INTO execution_slots (job_kind, job_id, organization_id, workflow_id, state, granted_at)
       VALUES ('run', $1, $2, $3, 'HOLDING', now())`,
      [jobId, organizationId, `structure-run-${jobId}`],
    );
    return jobId;
  }

  /** A run waiting behind a slot held by a job whose workflow does not exist; `loseTheSignal` frees that slot
   * without signalling anyone (a lost grant signal). */
  async function waitingBehindAHolder(tenant: string) {
    const t = await newTenant(tenant);
    const holder = await holdSlot(t.organizationId);
    const run = await startRun(t.organizationId);
    await until(
      () => slotOf(run.runId),
      (s) => s === 'WAITING',
      'the run waits',
    );
    const loseTheSignal = () => getStack().ds.query(`DELETE FROM execution_slots WHERE job_id = $1`, [holder]);
    return { tenant: t, holder, run, loseTheSignal };
  }

  it('waits QUEUED past its organization share, with no activity running, and starts on the grant signal', async () => {
    const t = await newTenant('slots-grant');
    const first = await startRun(t.organizationId);
    await executing(first.runId);
    const second = await startRun(t.organizationId);

    const waiting = await until(
      () => rowOf(second.runId),
      (r) => (r.status_detail as { reason?: string } | null)?.reason === 'WaitingForExecutionSlot',
      'the second run says it waits',
    );
    expect(waiting.status).to.equal('QUEUED');
    expect(waiting.status_detail).to.include({ executing: 1, limit: 1, ahead: 0 });
    expect((waiting.status_detail as { message: string }).message).to.include('ORG_MAX_CONCURRENT_RUNS=1');
    expect(await slotOf(second.runId)).to.equal('WAITING');
    const described = await second.handle.describe();
    expect(described.raw.pendingActivities ?? [], 'no activity runs while it waits').to.have.length(0);
    expect(executed).to.not.include(second.runId);

    // Another organization is not held up by this one's backlog.
    const other = await newTenant('slots-other');
    const third = await startRun(other.organizationId);
    await executing(third.runId);
    release.get(third.runId)!({ status: 'SUCCEEDED', exitCode: 0, message: null });
    expect(await third.handle.result()).to.equal('SUCCEEDED');

    release.get(first.runId)!({ status: 'SUCCEEDED', exitCode: 0, message: null });
    expect(await first.handle.result()).to.equal('SUCCEEDED');
    expect(await slotOf(first.runId), 'the ended run gave its slot back').to.equal(undefined);
    await executing(second.runId);
    expect(await signalNames(second.handle)).to.deep.equal(['slotGranted']);
    const started = await rowOf(second.runId);
    expect(started.status_detail, 'the waiting detail is cleared once admitted').to.equal(null);
    release.get(second.runId)!({ status: 'SUCCEEDED', exitCode: 0, message: null });
    expect(await second.handle.result()).to.equal('SUCCEEDED');
    const history = await historyOf(second.handle);
    expect(history).to.include('timerCanceled'); // the re-try timer was not needed
    expect(history).to.not.include('timerFired');
    // It started (QUEUED → STARTING) in the admitting local activity: no start activity of its own, one event;
    // and its terminal write gave the slot back: no release activity of its own (CODE_RUN_PATCHES_2).
    expect(await localActivities(second.handle)).to.deep.equal([
      'acquireExecutionSlot',
      'acquireExecutionSlot',
      'finishCodeRun',
    ]);
    const startingEvents = await getStack()
      .ds.getRepository(RunEvent)
      .countBy({ run_id: second.runId, type: 'StructureRunStarting' });
    expect(startingEvents).to.equal(1);
  });

  it('asks again on its timer when the grant signal is lost', async () => {
    const { run, loseTheSignal } = await waitingBehindAHolder('slots-timer');
    await loseTheSignal();
    const before = await ts.env.currentTimeMs();
    await ts.env.sleep(31_000); // skipped: the re-try timer fires
    await executing(run.runId);
    expect((await ts.env.currentTimeMs()) - before).to.be.at.least(30_000);
    release.get(run.runId)!({ status: 'SUCCEEDED', exitCode: 0, message: null });
    expect(await run.handle.result()).to.equal('SUCCEEDED');
    expect(await historyOf(run.handle)).to.include('timerFired');
    expect(await signalNames(run.handle)).to.deep.equal([]);
  });

  // SLOT_BACKOFF_PATCH: 30 s, 60 s, 120 s, then 240 s, so 215 s into a wait it has asked again three times.
  const PAST_THREE_REASKS_MS = 215_000;

  it('admits a queue one by one by the grant signals, however long its re-asks have backed off', async () => {
    const { ds } = getStack();
    const t = await newTenant('slots-queue');
    // A holder without a workflow, so that no activity runs while time is skipped (the test server would not).
    const holder = await holdSlot(t.organizationId);
    const queued: Array<{ runId: string; handle: WorkflowHandle }> = [];
    for (let i = 0; i < 5; i++) {
      const run = await startRun(t.organizationId);
      await until(
        () => slotOf(run.runId),
        (s) => s === 'WAITING',
        `run ${i} waits`,
      );
      queued.push(run);
    }
    await ts.env.sleep(PAST_THREE_REASKS_MS); // skipped: the re-asks back off (the test server's clock stops after)
    expect(executed.filter((id) => queued.some((q) => q.runId === id))).to.deep.equal([]);
    // What the holder's release does: the freed slot goes to the first in line, whose workflow is signalled.
    const granted = await releaseSlot(ds, { kind: 'run', jobId: holder }, { limit: 1 });
    expect(granted.map((g) => g.jobId)).to.deep.equal([queued[0].runId]);
    await queued[0].handle.signal(slotGrantedSignal);
    // From here each run's release grants the next in line and signals it: each starts at once (no time is
    // skipped, and every waiter's next re-ask is 240 s away), the last as promptly as the first.
    for (const [i, run] of queued.entries()) {
      await executing(run.runId);
      for (const later of queued.slice(i + 1)) expect(executed).to.not.include(later.runId);
      release.get(run.runId)!({ status: 'SUCCEEDED', exitCode: 0, message: null });
    }
    for (const run of queued) expect(await run.handle.result()).to.equal('SUCCEEDED');
    for (const run of queued) {
      expect(await signalNames(run.handle)).to.deep.equal(['slotGranted']);
      expect(await timerSeconds(run.handle), 'the re-asks, then the time limit').to.deep.equal([
        30, 60, 120, 240, 3600,
      ]);
      const history = await historyOf(run.handle);
      expect(history.filter((e) => e === 'timerFired')).to.have.length(3); // the fourth was cancelled by the grant
    }
  });

  it('makes up a grant signal lost after its re-asks backed off within SLOT_RETRY_MAX_MS (240 s)', async () => {
    const { run, loseTheSignal } = await waitingBehindAHolder('slots-lost');
    await ts.env.sleep(PAST_THREE_REASKS_MS); // its next re-ask is 240 s after the third
    await loseTheSignal();
    await ts.env.sleep(120_000);
    expect(executed, 'no re-ask 120 s after the third').to.not.include(run.runId);
    expect(await slotOf(run.runId)).to.equal('WAITING');
    await ts.env.sleep(121_000);
    await executing(run.runId);
    release.get(run.runId)!({ status: 'SUCCEEDED', exitCode: 0, message: null });
    expect(await run.handle.result()).to.equal('SUCCEEDED');
    expect(await timerSeconds(run.handle), 'the re-asks, then the time limit').to.deep.equal([30, 60, 120, 240, 3600]);
    expect(await signalNames(run.handle)).to.deep.equal([]);
  });

  it('ends a run cancelled while it waits CANCELLED at once, without ever executing or holding a slot', async () => {
    const { tenant: t, holder, run } = await waitingBehindAHolder('slots-cancel');
    await run.handle.signal(cancelRunSignal, { requestedBy: t.userId });
    expect(await run.handle.result()).to.equal('CANCELLED');
    const row = await rowOf(run.runId);
    expect(row.status).to.equal('CANCELLED');
    expect(row.status_detail).to.include({ reason: 'Cancelled', requested_by: t.userId });
    expect(executed).to.not.include(run.runId);
    expect(await slotOf(run.runId), 'its place in the queue is given back').to.equal(undefined);
    expect(await slotOf(holder)).to.equal('HOLDING');
  });

  it('keeps a build QUEUED while its organization has no free slot, and builds it once granted', async () => {
    const { ds } = getStack();
    const t = await newTenant('slots-build');
    const holder = await holdSlot(t.organizationId);
    const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': '' } });
    const deploymentId = randomUUID();
    await ds.getRepository(Deployment).save({
      deployment_id: deploymentId,
      organization_id: t.organizationId,
      resource_id: structureId,
      resource_kind: 'structure',
      status: 'QUEUED',
      status_detail: null,
      code_source: { default: {} },
      created_by: 'test',
      created_at: new Date(),
      updated_at: new Date(),
    });
    const input: DeploymentInput = {
      deploymentId,
      kind: 'structure',
      code: { default: {} },
      configFile: 'structure_config.yaml',
      timeLimitSeconds: 3600,
      heartbeatTimeoutSeconds: 3600,
    };
    const handle = await ts.env.client.workflow.start('deploymentWorkflow', {
      ...startOptionsFor(
        { kind: 'deployment', id: deploymentId, organizationId: t.organizationId, summary: 'test' },
        QUEUE,
      ),
      args: [input],
    });
    const waiting = await until(
      () => ds.getRepository(Deployment).findOneByOrFail({ deployment_id: deploymentId }),
      (d) => (d.status_detail as { reason?: string } | null)?.reason === 'WaitingForExecutionSlot',
      'the build says it waits',
    );
    expect(waiting.status).to.equal('QUEUED');
    expect(executed).to.not.include(deploymentId);

    // What the holder's release does: the freed slot goes to the waiter, whose workflow is signalled.
    const granted = await releaseSlot(ds, { kind: 'run', jobId: holder }, { limit: 1 });
    expect(granted.map((g) => g.jobId)).to.deep.equal([deploymentId]);
    await handle.signal(slotGrantedSignal);
    expect(await handle.result()).to.equal('FAILED');
    expect(executed).to.include(deploymentId);
    const ended = await ds.getRepository(Deployment).findOneByOrFail({ deployment_id: deploymentId });
    expect(ended.status_detail).to.deep.equal({ reason: 'ScriptFailed', message: 'stubbed build' });
    expect(await slotOf(deploymentId), 'the build gave its slot back').to.equal(undefined);
  });
});

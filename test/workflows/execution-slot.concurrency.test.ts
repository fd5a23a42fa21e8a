// Concurrency keys in the run workflow (workflows/execution-slot.ts, src/jobs/admission.ts), on the time-skipping
// server with the real admission activities and status writes (PostgreSQL) and a stubbed process activity: a run of
// a key at its limit waits QUEUED with no activity running and starts on the grant signal when the key's run ends,
// while another key's run starts at once; `skip` ends the newcomer CANCELLED without executing; `cancel_in_progress`
// cancels the executing run and starts the newcomer after it.
import type { WorkflowHandle } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import type { Concurrency } from '../../src/persistence/entities/code-resource';
import type { CodeRunInput, RunEnding } from '../../src/temporal/contracts';
import { startOptionsFor } from '../../src/temporal/workflow-start';
import { structureWithBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { startStubbedWorker, type StubbedWorker } from '../harness/stubbed-worker';

const QUEUE = 'tarmac-test-concurrency';
const SUCCEEDED: RunEnding = { status: 'SUCCEEDED', exitCode: 0, message: null };

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('concurrency keys in the run workflow (time-skipping)', function () {
  this.timeout(120_000);
  let ts: Awaited<ReturnType<typeof startTimeSkipping>>;
  const executed: string[] = [];
  const release = new Map<string, (e: RunEnding) => void>();
  let worker: StubbedWorker | undefined;

  before(async () => {
    const s = getStack();
    ts = await startTimeSkipping();
    const config = { ...s.config, execution: { ...s.config.execution, orgMaxConcurrentRuns: 100 } };
    worker = await startStubbedWorker(ts, {
      taskQueue: QUEUE,
      config,
      stubs: {
        // The process: runs until the test ends it, or until cancelled (heartbeats bring the cancellation).
        async executeCodeRun(input: { runId: string }): Promise<RunEnding> {
          executed.push(input.runId);
          const ctx = Context.current();
          const beat = setInterval(() => ctx.heartbeat(), 100);
          try {
            return await new Promise<RunEnding>((resolve, reject) => {
              release.set(input.runId, resolve);
              ctx.cancelled.catch(reject);
            });
          } finally {
            clearInterval(beat);
          }
        },
      },
    });
  });

  after(async () => {
    await worker?.stop();
    await ts?.stop();
  });

  async function structure(concurrency: Concurrency) {
    const t = await newTenant('concurrency-wf');
    const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': '' } });
    await getStack().ds.query(`UPDATE code_resources SET concurrency = $2 WHERE resource_id = $1`, [
      structureId,
      JSON.stringify(concurrency),
    ]);
    return async (key: string): Promise<{ runId: string; handle: WorkflowHandle }> => {
      const run = await getStack()
        .ds.getRepository(Run)
        .save(
          aRun({
            kind: 'structure',
            organization_id: t.organizationId,
            resource_id: structureId,
            concurrency_key: key,
          }),
        );
      // Heartbeats are throttled to 80% of the timeout: a short one brings a cancellation to the stub at once.
      const input: CodeRunInput = { runId: run.run_id, timeLimitSeconds: 3600, heartbeatTimeoutSeconds: 5 };
      const handle = await ts.env.client.workflow.start('codeRunWorkflow', {
        ...startOptionsFor(
          { kind: 'structure-run', id: run.run_id, organizationId: t.organizationId, summary: 't' },
          QUEUE,
        ),
        args: [input],
      });
      return { runId: run.run_id, handle };
    };
  }

  const rowOf = (runId: string) => getStack().ds.getRepository(Run).findOneByOrFail({ run_id: runId });
  const executing = (runId: string) => until(async () => executed.includes(runId), Boolean, `${runId} executes`);

  it('queue: the second run of a key waits with no activity, another key runs, the grant starts it', async () => {
    const start = await structure({ limit: 1, strategy: 'queue' });
    const a1 = await start('a');
    await executing(a1.runId);
    const a2 = await start('a');
    const waiting = await until(
      () => rowOf(a2.runId),
      (r) => (r.status_detail as { waiting_for?: string } | null)?.waiting_for === 'key',
      'the second run of key a says it waits for its key',
    );
    expect(waiting.status).to.equal('QUEUED');
    expect(waiting.status_detail).to.include({ executing: 1, limit: 1 });
    expect((await a2.handle.describe()).raw.pendingActivities ?? []).to.have.length(0);

    const b1 = await start('b');
    await executing(b1.runId);
    expect(executed, 'key b is not held up').to.not.include(a2.runId);

    release.get(a1.runId)!(SUCCEEDED);
    expect(await a1.handle.result()).to.equal('SUCCEEDED');
    await executing(a2.runId);
    const signals = ((await a2.handle.fetchHistory()).events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes?.signalName)
      .filter(Boolean);
    expect(signals).to.deep.equal(['slotGranted']);
    for (const r of [a2, b1]) {
      release.get(r.runId)!(SUCCEEDED);
      expect(await r.handle.result()).to.equal('SUCCEEDED');
    }
  });

  it('skip: a run of a key at its limit ends CANCELLED without executing', async () => {
    const start = await structure({ limit: 1, strategy: 'skip' });
    const first = await start('k');
    await executing(first.runId);
    const second = await start('k');
    expect(await second.handle.result()).to.equal('CANCELLED');
    const row = await rowOf(second.runId);
    expect(row.started_at).to.equal(null);
    expect((row.status_detail as { message: string }).message).to.include('strategy skip');
    expect(executed).to.not.include(second.runId);
    release.get(first.runId)!(SUCCEEDED);
    expect(await first.handle.result()).to.equal('SUCCEEDED');
  });

  it('cancel_in_progress: the executing run is cancelled and the new one starts after its end', async () => {
    const start = await structure({ limit: 1, strategy: 'cancel_in_progress' });
    const first = await start('k');
    await executing(first.runId);
    const second = await start('k');
    expect(await first.handle.result()).to.equal('CANCELLED');
    const cancelled = await rowOf(first.runId);
    expect((cancelled.status_detail as { message: string }).message).to.include(`superseded by run ${second.runId}`);
    await executing(second.runId);
    release.get(second.runId)!(SUCCEEDED);
    expect(await second.handle.result()).to.equal('SUCCEEDED');
  });
});

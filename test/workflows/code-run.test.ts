// The run workflow's own guarantees: the time limit is a workflow timer (proved with time skipping), a
// Temporal workflow cancellation ends the run CANCELLED like the api's cancel.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { createStructureRun } from '../../src/services/code/runs/structure-runs';
import { startOptionsFor, workflowIdOf } from '../../src/temporal/workflow-start';
import { createWorker } from '../../src/worker/create-worker';
import { createActivities } from '../../activities';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { aRun, runAlive, SLEEP_PROGRAM, waitForRun } from '../harness/runs';
import { getStack, newTenant, startTimeSkipping } from '../harness/stack';
import { skipWhileActivityRuns } from '../support/time-skipping';
import { ownerCaller } from '../harness/people';

const callerOf = ownerCaller;

/** Waits until the program of the run has printed its pid: it is running. */
async function pidOf(runId: string): Promise<number> {
  for (let i = 0; i < 300; i++) {
    const rows: Array<{ line: string }> = await getStack().ds.query(
      `SELECT line FROM run_logs WHERE run_id = $1 ORDER BY seq LIMIT 1`,
      [runId],
    );
    if (rows[0]) return Number(rows[0].line.split(' ')[1]);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} printed no pid`);
}

describe('structure run workflow', function () {
  this.timeout(120_000);

  it('ends a run past its time limit ERROR, by the workflow timer, without waiting for it', async () => {
    const { ds, config } = getStack();
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const ts = await startTimeSkipping();
    try {
      await ts.runWorker(async () => {
        // The heartbeat timeout is measured in (skipped) server time while heartbeats come in real time: it must
        // outlast the skip, or it would end the activity before the time limit does.
        const limits = { ...config, runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 7200 } };
        const run = await createStructureRun(
          { ds, temporal: ts.env.client, config: limits },
          callerOf(t),
          s.structureId,
          { args: ['100000'], env_vars: [] },
        );
        await pidOf(run.run_id);
        const handle = ts.env.client.workflow.getHandle(workflowIdOf('structure-run', run.run_id));
        const wallClock = Date.now();
        const skippedFrom = await ts.env.currentTimeMs();
        await skipWhileActivityRuns(ts.env, (config.runJob.timeLimitSeconds + 1) * 1000);
        const skippedMs = (await ts.env.currentTimeMs()) - skippedFrom;
        const status = await handle.result();
        console.log(`      skipped ${skippedMs / 1000} s of server time in ${Date.now() - wallClock} ms`);
        expect(skippedMs).to.be.at.least(config.runJob.timeLimitSeconds * 1000);
        expect(Date.now() - wallClock).to.be.lessThan(30_000);
        expect(status).to.equal('ERROR');
        const after = await ds.getRepository(Run).findOneByOrFail({ run_id: run.run_id });
        expect(after.status_detail).to.deep.equal({
          reason: 'TimeLimitExceeded',
          error: `Run exceeded its time limit of ${config.runJob.timeLimitSeconds} s`,
        });
        expect(runAlive(run.run_id)).to.equal(false);
      });
    } finally {
      await ts.stop();
    }
  });

  it('starts a run whose row is committed only after the first start activity looked for it', async () => {
    // The api commits a run's row right after Temporal accepted its workflow; under load the worker can be
    // faster (found by the worker-kill and pg-outage drills: the run stayed QUEUED, or skipped STARTING).
    const { ds, env, config } = getStack();
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': 'print("ran")\n' } });
    const runId = randomUUID();
    const now = new Date();
    const row: Run = aRun(
      {
        run_id: runId,
        kind: 'structure',
        organization_id: t.organizationId,
        resource_id: s.structureId,
        deployment_id: s.deploymentId,
        created_by: t.userId,
      },
      now,
    );
    const handle = await ds.transaction(async (em) => {
      await em.getRepository(Run).save(row);
      const started = await env.client.workflow.start('structureRunWorkflow', {
        ...startOptionsFor(
          { kind: 'structure-run', id: runId, organizationId: t.organizationId, summary: 'late commit' },
          config.temporal.taskQueue,
        ),
        args: [{ runId, timeLimitSeconds: 60, heartbeatTimeoutSeconds: 15 }],
      });
      // Commit only once the start activity is running and looking for the row (or the workflow gave up on it).
      for (;;) {
        const d = await started.describe();
        const looking = (d.raw.pendingActivities ?? []).some(
          (a) => a.activityType?.name === 'startStructureRun' && a.state === 2 /* STARTED */,
        );
        if (d.status.name !== 'RUNNING' || looking) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 100)); // it has looked at least once
      return started;
    });
    expect(await handle.result()).to.equal('SUCCEEDED');
    const events = (await as(t.key).get(`/api/structure-runs/${runId}/events`)).body.events;
    expect(events.map((e: any) => e.type)).to.deep.equal([
      'StructureRunStarting',
      'StructureRunRunning',
      'StructureRunCompleted',
    ]);
  });

  it('ends CANCELLED when the workflow itself is cancelled (Temporal UI), stopping the process', async () => {
    const t = await newTenant();
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
    const created = await as(t.key).post(`/api/structures/${s.structureId}/runs`, { args: ['600'] });
    const runId = created.body.structure_run_id;
    await pidOf(runId);
    const handle = getStack().env.client.workflow.getHandle(workflowIdOf('structure-run', runId));
    await handle.cancel();
    const run = await waitForRun(t.key, runId, undefined, 10_000);
    expect(run.status).to.equal('CANCELLED');
    expect(run.status_detail).to.deep.include({ reason: 'Cancelled', requested_by: 'Temporal workflow cancellation' });
    expect(runAlive(runId)).to.equal(false);
    // The row is written just before the workflow closes; then it closes as cancelled itself.
    const closed = await handle.result().then(
      () => 'COMPLETED',
      (err: Error) => (err.cause as Error | undefined)?.name,
    );
    expect(closed).to.equal('CancelledFailure');
    expect((await handle.describe()).status.name).to.equal('CANCELLED');
    const events = (await as(t.key).get(`/api/structure-runs/${runId}/events`)).body.events;
    expect(events.map((e: any) => e.type)).to.deep.equal([
      'StructureRunStarting',
      'StructureRunRunning',
      'StructureRunCancelled',
    ]);
  });

  it('enforces the log and memory limits: ERROR past the log limit, ERROR MemoryLimitExceeded past the memory limit', async () => {
    const { ds, config, env, activityDeps, workflowBundle } = getStack();
    const t = await newTenant();
    const limited = {
      ...config,
      temporal: { ...config.temporal, taskQueue: 'tarmac-test-limits' },
      runLimits: { ...config.runLimits, logBytes: 2048, memoryMb: 256 },
    };
    const worker = await createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: limited.temporal.taskQueue,
      deps: { ...activityDeps, config: limited },
      workflowBundle,
      shutdownGraceTime: '1 second',
    });
    await worker.runUntil(async () => {
      const chatty = await structureWithBuild(t.organizationId, {
        files: { 'structure.py': 'import time\nfor i in range(100000):\n    print("line %d" % i)\ntime.sleep(600)\n' },
      });
      const greedy = await structureWithBuild(t.organizationId, {
        files: { 'structure.py': 'x = bytearray(512 * 1024 * 1024)\nprint("allocated")\n' },
      });
      const deps = { ds, temporal: env.client, config: limited };
      const loud = await createStructureRun(deps, callerOf(t), chatty.structureId, { args: [], env_vars: [] });
      const big = await createStructureRun(deps, callerOf(t), greedy.structureId, { args: [], env_vars: [] });

      const loudRun = await waitForRun(t.key, loud.run_id);
      expect(loudRun.status).to.equal('ERROR');
      expect(loudRun.status_detail).to.deep.equal({
        reason: 'LogLimitExceeded',
        error: 'Log limit exceeded: the run wrote more than 2048 bytes to stdout and stderr',
      });
      const logs: string[] = (await as(t.key).get(`/api/structure-runs/${loud.run_id}/logs`)).body.logs;
      expect(logs.slice(0, 3)).to.deep.equal(['line 0', 'line 1', 'line 2']);
      expect(logs[logs.length - 1]).to.match(/log limit of 2048 bytes exceeded/);
      expect(logs.slice(0, -1).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)).to.be.at.most(2048);

      // The run's control group kills it (the memory of the whole run, not an address-space limit).
      const bigRun = await waitForRun(t.key, big.run_id);
      expect(bigRun.status).to.equal('ERROR');
      expect(bigRun.status_detail).to.deep.equal({
        reason: 'MemoryLimitExceeded',
        error:
          'The run used more than its memory limit of 256 MiB (RUN_MEMORY_LIMIT_MB): the kernel killed a process of it',
      });
    });
  });

  it('ends a run past its CPU time limit ERROR (CpuLimitExceeded)', async () => {
    const { ds, config, env, activityDeps, workflowBundle } = getStack();
    const t = await newTenant();
    const limited = {
      ...config,
      temporal: { ...config.temporal, taskQueue: 'tarmac-test-cpu' },
      sandbox: { ...config.sandbox, cpuSeconds: 1 },
    };
    const worker = await createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: limited.temporal.taskQueue,
      deps: { ...activityDeps, config: limited, sandbox: activityDeps.sandbox.withConfig(limited.sandbox) },
      workflowBundle,
      shutdownGraceTime: '1 second',
    });
    await worker.runUntil(async () => {
      const spinner = await structureWithBuild(t.organizationId, {
        files: { 'structure.py': 'while True:\n    pass\n' },
      });
      const run = await createStructureRun(
        { ds, temporal: env.client, config: limited },
        callerOf(t),
        spinner.structureId,
        { args: [], env_vars: [] },
      );
      const ended = await waitForRun(t.key, run.run_id);
      expect(ended.status).to.equal('ERROR');
      expect(ended.status_detail).to.deep.equal({
        reason: 'CpuLimitExceeded',
        error: 'The process used more than its CPU time limit of 1 s (SANDBOX_CPU_SECONDS)',
      });
    });
  });

  it('ends a run whose worker is killed mid-run ERROR (worker lost), and the process dies with its worker', async () => {
    const { ds, config, env, activityDeps, workflowBundle, baseUrl } = getStack();
    const t = await newTenant();
    const queue = 'tarmac-test-crash';
    const crashConfig = {
      ...config,
      temporal: { ...config.temporal, taskQueue: queue },
      runProcess: { ...config.runProcess, heartbeatTimeoutSeconds: 2 },
    };
    // At first the queue's workflows (and their local activities, the status writes) run in this process and
    // its activity tasks only in a child process: the victim.
    const workflowsOnly = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: queue,
      workflowBundle,
      activities: createActivities({ ...activityDeps, config: crashConfig }),
      enableNonLocalActivities: false,
    });
    const { runId } = await workflowsOnly.runUntil(async () => {
      const victim = spawn(process.execPath, [path.join(__dirname, '../support/activity-worker-process.js')], {
        env: {
          ...process.env,
          DATABASE_URL: (ds.options as { url: string }).url,
          SECRETS_KEY: config.secretsKey!.toString('base64'),
          TEMPORAL_ADDRESS: env.address,
          TEMPORAL_TASK_QUEUE: queue,
          PUBLIC_BASE_URL: baseUrl,
          DATA_DIR: config.dataDir,
          LOG_LEVEL: 'silent',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = once(victim, 'exit');
      await new Promise<void>((resolve, reject) => {
        victim.stdout!.on('data', (d: Buffer) => String(d).includes('ready') && resolve());
        void exited.then(() => reject(new Error('the worker process exited early')));
      });
      const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
      const run = await createStructureRun(
        { ds, temporal: env.client, config: crashConfig },
        callerOf(t),
        s.structureId,
        { args: ['600'], env_vars: [] },
      );
      await pidOf(run.run_id);
      await waitForRun(t.key, run.run_id, (r) => r.status === 'RUNNING');
      victim.kill('SIGKILL');
      await exited;
      return { runId: run.run_id };
    });
    for (let i = 0; i < 100 && runAlive(runId); i++) await new Promise((r) => setTimeout(r, 20));
    expect(runAlive(runId), 'the user process outlived its worker').to.equal(false);

    // Another worker takes the retry once the heartbeat timeout declares the first one lost.
    const lostAt = Date.now();
    const replacement = await createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: queue,
      deps: { ...activityDeps, config: crashConfig },
      workflowBundle,
      shutdownGraceTime: '1 second',
    });
    const ended = await replacement.runUntil(waitForRun(t.key, runId, undefined, 30_000));
    console.log(`      worker loss recorded ${Date.now() - lostAt} ms after the kill`);
    expect(ended.status).to.equal('ERROR');
    expect(ended.status_detail.reason).to.equal('WorkerLost');
    const events = (await as(t.key).get(`/api/structure-runs/${runId}/events`)).body.events;
    expect(events.map((e: any) => e.type)).to.deep.equal([
      'StructureRunStarting',
      'StructureRunRunning',
      'StructureRunError',
    ]);
  });
});

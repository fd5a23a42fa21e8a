// Drill: a rolling upgrade with work in flight (Worker Versioning; docs/production.md#upgrades). On a Temporal dev
// server of its own (which looks at a version's drainage every second, not every 3 minutes), build A's api and
// workers serve, and A's first worker makes its version current (a first install). Long work of every kind starts
// on A. Then, in the order the guide gives: B's expand migration runs while A serves; B's workers (upgrade-build.ts:
// a copy of this build whose workflows all begin with a timer A's never had) poll without becoming current; B is
// promoted; work created through A's api now runs on B; B's api replaces A's; A's version drains (no open workflow
// pinned to it) and A's workers get SIGTERM; the contract migration runs last. The audit: every item ends
// SUCCEEDED, none stuck or lost, each structure run's code ran once; every workflow ran on one build only (A when
// its first task ran before the promotion, else B; a child on its parent's); no workflow task failed in any
// history (no nondeterminism) nor in a worker's log; and a history of A replayed on B does fail: the change was
// really incompatible, only pinning kept A's runs off B.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import {
  describeDeployment,
  setCurrentVersion,
  versionName,
  versionStatus,
} from '../../src/temporal/worker-versioning';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { TERMINAL } from '../harness/runs';
import { freePort, getStack } from '../harness/stack';
import { DrillReport, Findings, tempDir, until } from './kit';
import { processEnv, Processes, startApiProcess, startTemporalDevServer, startWorkerProcess } from './processes';
import { checkRuns, DRILL_PROGRAM } from './run-checks';
import { addContractMigration, makeBuildB, migrateWith } from './upgrade-build';
import { Witness } from './witness';
import { type Ending, workOfEveryKind } from './work-of-every-kind';

export interface UpgradeOptions {
  /** Items of each kind started in each phase: on A, then on B through A's api, then through B's. */
  perKind: number;
  /** How long the long items take (structure runs, function handlers, assistant answers). */
  seconds: number;
  /** Worker processes of each build. */
  workers: number;
}

/** Drainage looked at every second, a version drained 5 s after its last pinned workflow closed (default: 3 min). */
const DRAINAGE_ARGS = [
  '--dynamic-config-value',
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod="5s"',
  '--dynamic-config-value',
  'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
];
const NON_DETERMINISTIC = 24; // temporal.api.enums.v1.WorkflowTaskFailedCause

export async function upgradeDrill(
  opts: UpgradeOptions = { perKind: 2, seconds: 20, workers: 2 },
): Promise<DrillReport> {
  const f = new Findings('upgrade', `roll the workers from build A to B (workflow code changed) with work in flight`);
  const { ds, modelProvider, workflowBundle } = getStack();
  const procs = new Processes();
  const witness = await Witness.start();
  const dir = tempDir('upgrade');
  const deploymentName = `tarmac-drill-${randomUUID().slice(0, 8)}`;
  const A = { deploymentName, buildId: 'drill-a' };
  const B = { deploymentName, buildId: 'drill-b' };
  const port = await freePort();
  let connection: Connection | undefined;
  try {
    await startTemporalDevServer(procs, { dbFile: path.join(dir, 'temporal.sqlite'), port, extraArgs: DRAINAGE_ARGS });
    connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    const client = new Client({ connection, namespace: 'default' });
    const shared = {
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_TASK_QUEUE: `drill-upgrade-${randomUUID().slice(0, 8)}`,
      WORKER_DEPLOYMENT_NAME: deploymentName,
      MODEL_PROVIDERS: `local=${modelProvider.baseUrl}`,
      // A long function's execute answers 202 at once, and the drill polls its run.
      FUNCTION_EXECUTE_TIMEOUT_SECONDS: '1',
    };
    // User code reaches the stack's api, which stays up through the rollout (as a load balancer's address would).
    const workerEnv = (buildId: string) => ({
      ...shared,
      WORKER_BUILD_ID: buildId,
      RUN_API_BASE_URL: getStack().baseUrl,
      ORG_MAX_CONCURRENT_RUNS: '1000',
    });
    const apiA = await startApiProcess(procs, 'api-A', shared);
    let serving = apiA.baseUrl;
    const workersA = [];
    for (let i = 1; i <= opts.workers; i++)
      workersA.push(await startWorkerProcess(procs, `worker-A${i}`, workerEnv(A.buildId)));
    const first = await describeDeployment(client, 'default', deploymentName);
    if (first.currentBuildId !== A.buildId)
      f.violation(`build A's first worker did not make its version current (current: ${first.currentBuildId})`);

    // The work: every kind, and structure runs of the drill program (its executions reported to the witness).
    const work = await workOfEveryKind('drill-upgrade', () => serving, { seconds: opts.seconds });
    const program = await structureWithBuild(work.organizationId, { files: { 'structure.py': DRILL_PROGRAM } });
    const items: Array<{ phase: string; ending: Promise<Ending> }> = [];
    const runIds: string[] = [];
    let open = 0;
    const phase = async (name: string) => {
      const created: Promise<void>[] = [];
      for (const kind of work.kinds)
        for (let i = 0; i < opts.perKind; i++) {
          let answered!: () => void;
          created.push(new Promise<void>((resolve) => (answered = resolve)));
          open++;
          const ending = kind(answered)
            .catch((err: Error): Ending => ({ what: 'an item', status: 'THREW', reason: err.message }))
            .finally(() => {
              open--;
              answered();
            });
          items.push({ phase: name, ending });
        }
      for (let i = 0; i < opts.perKind; i++) {
        const res = await as(work.key, serving).post(`/api/structures/${program.structureId}/runs`, {
          args: ['4', String(opts.seconds), '0'],
          env_vars: [{ name: 'DRILL_WITNESS', value: witness.url }],
        });
        if (res.status !== 201) throw new Error(`a run of phase ${name} answered ${res.status} ${res.text}`);
        runIds.push(res.body.structure_run_id);
      }
      await Promise.all(created);
    };

    // 1. Build B, as CI builds an image, while A serves.
    const buildB = await makeBuildB(dir);
    f.notes.push(`build B: ${buildB.patched.length} workflows begin with a timer build A's do not have`);
    await phase('A');
    await until('the runs on A to be RUNNING', 120_000, async () => {
      const [{ n }] = await ds.query(
        `SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1) AND status = 'RUNNING'`,
        [runIds],
      );
      return n === runIds.length ? true : undefined;
    });
    // 2. B's expand migration, A serving.
    const expanded = await migrateWith(buildB, processEnv({}));
    if (expanded.length !== 1) f.violation(`B's expand migration applied ${expanded.join(', ') || 'nothing'}`);
    // 3. B's workers poll; they do not take over by themselves.
    const workersB = [];
    for (let i = 1; i <= opts.workers; i++)
      workersB.push(
        await startWorkerProcess(procs, `worker-B${i}`, workerEnv(B.buildId), undefined, undefined, buildB),
      );
    const before = await describeDeployment(client, 'default', deploymentName);
    if (before.currentBuildId !== A.buildId)
      f.violation(`B's workers changed the current version to ${before.currentBuildId} by themselves`);
    // 4. Promote B: new workflows start on it.
    await setCurrentVersion(client, 'default', B, { identity: 'upgrade drill' });
    const promotedAt = Date.now();
    f.count('items in flight on A at the promotion', open);
    f.notes.push(
      `${open} of ${items.length} items of work (and ${runIds.length} drill runs) in flight on A at B's promotion`,
    );
    if (!open) f.violation('nothing was in flight on A at the promotion: the drill did not test an upgrade');
    // 5. A's api, still serving, creates work that runs on B; then B's api replaces it.
    await phase('B through api A');
    const apiB = await startApiProcess(procs, 'api-B', shared, undefined, undefined, buildB.dist);
    serving = apiB.baseUrl;
    await procs.kill(apiA.child, 'SIGTERM');
    await phase('B through api B');
    // 6. Drain A: no open workflow pinned to it; then its workers stop.
    const drained = await until(
      `${versionName(A)} to drain`,
      opts.seconds * 3_000 + 180_000,
      // The server may delete a drained version before a poll sees it DRAINED (NOT_FOUND): gone is drained. The
      // count of workflows still pinned to A below checks it either way.
      async () =>
        (
          await versionStatus(client, 'default', A).catch((err: { code?: number }) => {
            if (err?.code === 5) return { status: 'DRAINED' };
            throw err;
          })
        ).status === 'DRAINED'
          ? Date.now()
          : undefined,
      500,
    );
    f.notes.push(`version A drained ${((drained - promotedAt) / 1000).toFixed(1)} s after B's promotion`);
    const pinnedToA = await client.workflow.count(
      `TemporalWorkerDeploymentVersion = '${versionName(A)}' AND ExecutionStatus = 'Running'`,
    );
    if (pinnedToA.count) f.violation(`A was reported drained with ${pinnedToA.count} workflows open on it`);
    for (const w of workersA) {
      await procs.kill(w, 'SIGTERM');
      const { code } = await w.exited;
      if (code !== 0) f.violation(`${w.name} exited ${code} on SIGTERM`);
    }
    f.faults = 1;

    // 7. Every item ends; then the contract migration of the next release.
    const endings = await Promise.all(items.map(async (i) => ({ phase: i.phase, ...(await i.ending) })));
    for (const e of endings) {
      f.checked++;
      f.count(`${e.what} ${e.status}`);
      if (e.status !== 'SUCCEEDED')
        f.violation(`a ${e.what} of phase ${e.phase} ended ${e.status} ${e.reason ?? ''} ${e.message ?? ''}`.trim());
    }
    await until('the structure runs to end', opts.seconds * 1000 + 120_000, async () => {
      const [{ n }] = await ds.query(
        `SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1) AND status = ANY($2)`,
        [runIds, TERMINAL],
      );
      return n === runIds.length ? true : undefined;
    }).catch((err: Error) => f.violation(err.message));
    await checkRuns(f, { ds, temporal: client, runIds, witness, expect: { lines: 4 } });
    addContractMigration(buildB);
    const contracted = await migrateWith(buildB, processEnv({}));
    if (contracted.length !== 1) f.violation(`the contract migration applied ${contracted.join(', ') || 'nothing'}`);

    await auditWorkflows(f, client, promotedAt);
    for (const w of [...workersA, ...workersB]) {
      const line = w.find('TMPRL1100') ?? w.find('ondetermini');
      if (line) f.violation(`${w.name} logged a nondeterminism error: ${line.slice(0, 300)}`);
    }
    await replayAcrossBuilds(f, client, { a: workflowBundle.code, b: buildB.bundleCode });
  } finally {
    await procs.stopAll(f);
    await connection?.close();
    await witness.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return f.report();
}

/**
 * Every workflow of the drill's Temporal: closed, its tasks completed by one build only, the expected one, and
 * none failed. A root's build is A when its first task completed before the promotion, else B; a child's, its
 * parent's (a pinned parent's children on its task queue inherit its version).
 */
async function auditWorkflows(f: Findings, client: Client, promotedAt: number): Promise<void> {
  const all: WorkflowExecutionInfo[] = [];
  for await (const wf of client.workflow.list()) all.push(wf);
  const buildOf = new Map<string, string>();
  const byBuild: Record<string, number> = {};
  let failedTasks = 0;
  let nondeterministic = 0;
  // Roots first, so that a child's parent is known.
  for (const wf of [...all].sort((x, y) => Number(!!x.parentExecution) - Number(!!y.parentExecution))) {
    f.checked++;
    if (wf.status.name === 'RUNNING') f.violation(`workflow ${wf.workflowId} (${wf.type}) is still open`);
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const builds = new Set<string>();
    let firstTaskAt: number | undefined;
    for (const e of history.events ?? []) {
      const done = e.workflowTaskCompletedEventAttributes;
      if (done) {
        builds.add(done.deploymentVersion?.buildId ?? 'unversioned');
        firstTaskAt ??= Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      }
      const failed = e.workflowTaskFailedEventAttributes;
      if (failed) {
        failedTasks++;
        if (Number(failed.cause) === NON_DETERMINISTIC || /nondetermin/i.test(failed.failure?.message ?? ''))
          nondeterministic++;
        f.violation(`workflow ${wf.workflowId}: a workflow task failed (${failed.cause}: ${failed.failure?.message})`);
      }
    }
    const build = [...builds].join('+');
    buildOf.set(wf.workflowId, build);
    byBuild[build] = (byBuild[build] ?? 0) + 1;
    const parent = wf.parentExecution && buildOf.get(wf.parentExecution.workflowId ?? '');
    const expected = parent ?? ((firstTaskAt ?? 0) < promotedAt ? 'drill-a' : 'drill-b');
    if (build !== expected) f.violation(`workflow ${wf.workflowId} (${wf.type}) ran on ${build}, expected ${expected}`);
  }
  f.count('workflow tasks failed', failedTasks);
  f.count('nondeterminism errors', nondeterministic);
  for (const [build, n] of Object.entries(byBuild)) f.count(`workflows on ${build}`, n);
  f.notes.push(
    `${all.length} workflows: ${Object.entries(byBuild)
      .map(([b, n]) => `${n} on ${b}`)
      .join(', ')}; ${failedTasks} workflow tasks failed, ${nondeterministic} of nondeterminism`,
  );
}

/** A structure run's history recorded on A replays on A's code and fails on B's: B really changed. */
async function replayAcrossBuilds(f: Findings, client: Client, code: { a: string; b: string }): Promise<void> {
  let found: WorkflowExecutionInfo | undefined;
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'codeRunWorkflow'` })) {
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    const onA = history.events?.some(
      (e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId === 'drill-a',
    );
    if (onA) {
      found = wf;
      break;
    }
  }
  if (!found) return f.violation('no structure run of build A to replay');
  const history = await client.workflow.getHandle(found.workflowId, found.runId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: { code: code.a } }, history, found.workflowId).catch((err: Error) =>
    f.violation(`A's history does not replay on A's code: ${err.message}`),
  );
  const onB = await Worker.runReplayHistory({ workflowBundle: { code: code.b } }, history, found.workflowId).then(
    () => 'replayed',
    (err: Error) => err.name,
  );
  f.notes.push(`a structure run's history of build A replayed on build B: ${onB}`);
  if (onB !== 'DeterminismViolationError')
    f.violation(`B's change did not break the replay of A's history (${onB}): the drill proves nothing`);
}

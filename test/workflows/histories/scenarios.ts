// The workflows in a frame of workflows/run-scope.ts whose code changed with it (data job, knowledge base job,
// integration delivery, deployment) and the code run workflow, run with stubbed activities on the time-skipping server, one per way
// they end: the work's own ending, a failed activity, the time limit, a `cancel` signal (deployments only from
// DEPLOYMENT_PATCHES_1 on), a workflow cancellation, and MISSING (no row). The scenario is the job id's prefix, so the stubs
// know what to do. record.ts saves their histories (what index.replay.test.ts replays), record-patched.ts those of
// the patched paths; run-scope.test.ts checks the ending each one writes.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Activities } from '../../../activities';
import { cancelRunSignal, slotGrantedSignal } from '../../../src/temporal/contracts';

export const SCENARIOS = ['succeeded', 'failed', 'timed-out', 'cancelled', 'workflow-cancelled', 'missing'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const JOB_WORKFLOWS = ['dataJobWorkflow', 'knowledgeBaseJobWorkflow', 'integrationDeliveryWorkflow'] as const;
export type JobWorkflow = (typeof JOB_WORKFLOWS)[number];

export const RECORDED_WORKFLOWS = [...JOB_WORKFLOWS, 'deploymentWorkflow', 'codeRunWorkflow'] as const;
export type RecordedWorkflow = (typeof RECORDED_WORKFLOWS)[number];

/** The patch from which deployments handle the `cancel` signal (workflows/deployment.ts DEPLOYMENT_PATCHES_1). */
const DEPLOYMENT_PATCHES_1 = 'deployment-patches-1';

/**
 * The scenarios of `workflow` as its code before any patch (or the code of `patch`) has them: a deployment
 * handles a `cancel` signal only from DEPLOYMENT_PATCHES_1 on.
 */
export const scenariosOf = (workflow: RecordedWorkflow, patch?: string): readonly Scenario[] =>
  workflow === 'deploymentWorkflow' && patch !== DEPLOYMENT_PATCHES_1
    ? SCENARIOS.filter((s) => s !== 'cancelled')
    : SCENARIOS;

/** The scenarios of `workflow` as today's code has them. */
export const currentScenariosOf = (workflow: RecordedWorkflow) => scenariosOf(workflow, DEPLOYMENT_PATCHES_1);

export const historyFile = (workflow: RecordedWorkflow, scenario: Scenario) => `${workflow}.${scenario}.json`;

/**
 * Histories recorded again once a `patched()` branch changed a workflow's commands, from the patched code,
 * beside those from before it: both kinds of execution may be in flight. record-patched.ts records them.
 */
export const PATCHED_RECORDINGS = [
  // DATA_JOB_LOCAL_WRITES_PATCH: the start, the chain and the terminal write as local activities.
  { workflow: 'dataJobWorkflow', patch: 'data-job-local-writes' },
  // SLOT_BACKOFF_PATCH: a build that first waits for its execution slot, granted by signal (jobStubs' slotGrants).
  { workflow: 'deploymentWorkflow', patch: 'execution-slot-backoff' },
  // SLOT_STARTS_RUN_PATCH: the run starts in the local activity that admits it (no startCodeRun).
  { workflow: 'codeRunWorkflow', patch: 'slot-starts-run' },
  // CODE_RUN_PATCHES_1: one patch marker for every patch before it (the runs' paths are those of slot-starts-run).
  { workflow: 'codeRunWorkflow', patch: 'code-run-patches-1' },
  // CODE_RUN_PATCHES_2: the terminal write gives the slot back (no releaseExecutionSlot after finishCodeRun).
  { workflow: 'codeRunWorkflow', patch: 'code-run-patches-2' },
  // DATA_JOB_SLOT_PATCH, KNOWLEDGE_BASE_JOB_SLOT_PATCH: the jobs take an execution slot (the fair share) first.
  { workflow: 'dataJobWorkflow', patch: 'data-job-slot' },
  { workflow: 'knowledgeBaseJobWorkflow', patch: 'knowledge-base-job-slot' },
  // DEPLOYMENT_PATCHES_1: one marker for every patch before it (a build that waits for its slot first, as
  // execution-slot-backoff), and the `cancel` signal handled (ends ERROR, reason Cancelled).
  { workflow: 'deploymentWorkflow', patch: DEPLOYMENT_PATCHES_1 },
] as const satisfies ReadonlyArray<{ workflow: RecordedWorkflow; patch: string }>;
export type PatchedRecording = (typeof PATCHED_RECORDINGS)[number];

export const patchedHistoryFile = ({ workflow, patch }: PatchedRecording, scenario: Scenario) =>
  `${workflow}.${patch}.${scenario}.json`;

/** The time limit of every scenario: the timed-out one waits this long in real time (an activity runs). */
export const TIME_LIMIT_SECONDS = 2;

const scenarioOf = (id: string) => SCENARIOS.find((s) => id.startsWith(`${s}:`))!;

/** The long activity of a scenario: ends by itself, fails, or heartbeats until it is cancelled. */
async function longWork<T>(id: string, result: T): Promise<T> {
  const scenario = scenarioOf(id);
  if (scenario === 'failed') throw ApplicationFailure.nonRetryable('the source refused', 'SourceRefused');
  if (scenario === 'succeeded') return result;
  const ctx = Context.current();
  for (;;) {
    ctx.heartbeat();
    await ctx.sleep(100); // rejects with the cancellation
  }
}

export type JobActivities = Pick<
  Activities,
  | 'startDataJob'
  | 'ingestDataJob'
  | 'chainKnowledgeBaseJobs'
  | 'finishDataJob'
  | 'startKnowledgeBaseJob'
  | 'ingestKnowledgeBase'
  | 'finishKnowledgeBaseJob'
  | 'startIntegrationDelivery'
  | 'startDeliveryWork'
  | 'awaitAssistantRuns'
  | 'postChatAnswers'
  | 'finishIntegrationDelivery'
  | 'acquireExecutionSlot'
  | 'releaseExecutionSlot'
  | 'beginDeployment'
  | 'buildDeployment'
  | 'finishDeployment'
  | 'startCodeRun'
  | 'executeCodeRun'
  | 'finishCodeRun'
  | 'retryCodeRun'
>;

/**
 * The stubs, and what each job's terminal write received (by job id) and which long activities started.
 * `slotGrants`: a job's first ask for an execution slot waits, and is granted by a `slotGranted` signal (sent
 * through this client), as a release would; without it every ask is admitted at once.
 */
export function jobStubs(opts: { slotGrants?: Client } = {}) {
  const asked = new Set<string>();
  const endings = new Map<string, unknown>();
  const working = new Set<string>();
  const started = (id: string) => scenarioOf(id) !== 'missing';
  const activities: JobActivities = {
    async startDataJob({ jobId }) {
      return started(jobId);
    },
    async ingestDataJob({ jobId }) {
      working.add(jobId);
      return longWork(jobId, { status: 'SUCCEEDED', errors: [], bytesIngested: 42, stats: { items: 1 } });
    },
    async chainKnowledgeBaseJobs() {
      return ['kb-job-1'];
    },
    async finishDataJob({ jobId, ending }) {
      endings.set(jobId, ending);
      return ending.status;
    },
    async startKnowledgeBaseJob({ jobId }) {
      return started(jobId);
    },
    async ingestKnowledgeBase({ jobId }) {
      working.add(jobId);
      return longWork(jobId, { status: 'SUCCEEDED', errors: [], bytesIngested: 42, stats: { chunks: 3 } });
    },
    async finishKnowledgeBaseJob({ jobId, ending }) {
      endings.set(jobId, ending);
      return ending.status;
    },
    async startIntegrationDelivery({ deliveryId }) {
      return started(deliveryId);
    },
    async startDeliveryWork({ deliveryId }) {
      if (scenarioOf(deliveryId) === 'failed') throw ApplicationFailure.nonRetryable('no token', 'CodehostAppError');
      // The "assistant run" is named after the delivery, so that its wait knows the scenario.
      return { assistantRunIds: [deliveryId], reply: true };
    },
    async awaitAssistantRuns({ runIds: [deliveryId] }) {
      working.add(deliveryId);
      await longWork(deliveryId, undefined);
    },
    async postChatAnswers() {},
    async finishIntegrationDelivery({ deliveryId, ending }) {
      endings.set(deliveryId, ending);
      return ending.status;
    },
    async acquireExecutionSlot({ job, workflowId, startRun }) {
      if (opts.slotGrants && !asked.has(workflowId)) {
        asked.add(workflowId);
        await opts.slotGrants.workflow.getHandle(workflowId).signal(slotGrantedSignal);
        return { admitted: false, executing: 1, ahead: 0, limit: 1 };
      }
      return startRun ? { admitted: true, started: started(job.jobId) } : { admitted: true };
    },
    async releaseExecutionSlot() {},
    async beginDeployment({ deploymentId }) {
      return started(deploymentId);
    },
    async buildDeployment({ deploymentId }) {
      working.add(deploymentId);
      if (scenarioOf(deploymentId) === 'failed') throw ApplicationFailure.nonRetryable('the disk is gone', 'DiskGone');
      return longWork(deploymentId, {
        status: 'SUCCEEDED',
        buildPath: '/builds/stubbed',
        codeSource: { default: {} },
        fingerprint: null,
        detail: {},
      });
    },
    async finishDeployment({ deploymentId, outcome }) {
      endings.set(deploymentId, outcome);
      return outcome.status;
    },
    async startCodeRun({ runId }) {
      return started(runId);
    },
    async executeCodeRun({ runId }) {
      working.add(runId);
      return longWork(runId, { status: 'SUCCEEDED', exitCode: 0, message: null });
    },
    async finishCodeRun({ runId, ending }) {
      endings.set(runId, ending);
      return ending.status;
    },
    async retryCodeRun() {
      return false;
    },
  };
  return { activities, endings, working };
}

/** Runs one scenario of one job workflow to its end: its handle and result ('cancelled' when the workflow was). */
export async function runScenario(
  client: Client,
  taskQueue: string,
  workflow: RecordedWorkflow,
  scenario: Scenario,
  working: Set<string>,
): Promise<{ id: string; handle: WorkflowHandle; result: unknown }> {
  const id = `${scenario}:${randomUUID()}`;
  const limits = { timeLimitSeconds: TIME_LIMIT_SECONDS, heartbeatTimeoutSeconds: 1 };
  const input =
    workflow === 'integrationDeliveryWorkflow'
      ? { deliveryId: id, ...limits }
      : workflow === 'codeRunWorkflow'
        ? { runId: id, ...limits }
        : workflow === 'deploymentWorkflow'
          ? {
              deploymentId: id,
              kind: 'structure',
              code: { default: {} },
              configFile: 'structure_config.yaml',
              ...limits,
            }
          : { jobId: id, ...limits };
  const handle = await client.workflow.start(workflow, { taskQueue, workflowId: `${workflow}-${id}`, args: [input] });
  if (scenario === 'cancelled' || scenario === 'workflow-cancelled') {
    for (let i = 0; i < 400 && !working.has(id); i++) await new Promise((r) => setTimeout(r, 25));
    if (!working.has(id)) throw new Error(`${workflow} ${scenario}: the long activity never started`);
    if (scenario === 'cancelled') await handle.signal(cancelRunSignal, { requestedBy: 'user-1' });
    else await handle.cancel();
  }
  const result = await handle.result().catch((err: Error) => {
    if (scenario === 'workflow-cancelled' && (err.cause as Error | undefined)?.name === 'CancelledFailure') {
      return 'cancelled';
    }
    throw err;
  });
  return { id, handle, result };
}

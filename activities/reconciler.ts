import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from './deps';
import type { RunKind } from '../src/persistence/entities/run';
import { appendEvents, transitionDeployment, transitionRun } from '../src/services/code/runs/state';
import { workflowIdOf } from '../src/temporal/workflow-start';
import { transitionJob } from '../src/services/knowledge/job-state';
import { transitionDelivery } from '../src/services/integrations/deliveries';
import { transitionDataJob } from '../src/services/data-connectors/job-state';
import { releaseSlot, staleSlotHolders } from '../src/jobs/admission';
import { signalGranted } from './execution-slots';

/** What the workflow of an open record looks like from Temporal: still running, or closed (and how). */
async function workflowState(deps: ActivityDeps, workflowId: string): Promise<'RUNNING' | string> {
  try {
    return (await deps.temporal.workflow.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
    throw err;
  }
}

const reasonFor = (state: string) =>
  state === 'NOT_FOUND'
    ? 'Its workflow does not exist (it was never started or was deleted)'
    : `Its workflow ended (${state}) without recording a final state`;

/**
 * Settles records whose workflow is gone: a run, deployment, knowledge base job or data job still QUEUED/STARTING/RUNNING/DEPLOYING
 * while Temporal says its workflow closed (terminated, timed out, failed) or never existed. Such a row
 * would otherwise say "RUNNING" forever. Only rows untouched for `olderThanSeconds` are examined, so a
 * record whose workflow is being started right now is left alone.
 */
/**
 * The open rows a query finds (`$1` = olderThanSeconds, `$2` = limit), each checked against its workflow:
 * one whose workflow no longer runs is settled by `settle` (a guarded transition). Answers how many moved.
 */
async function settleStale<R>(
  deps: ActivityDeps,
  input: { olderThanSeconds: number; limit: number },
  open: { sql: string; workflowId: (row: R) => string },
  settle: (row: R, state: string) => Promise<boolean>,
): Promise<number> {
  const rows: R[] = await deps.ds.query(open.sql, [input.olderThanSeconds, input.limit]);
  let settled = 0;
  for (const row of rows) {
    const state = await workflowState(deps, open.workflowId(row));
    if (state !== 'RUNNING' && (await settle(row, state))) settled++;
  }
  return settled;
}

/**
 * Frees the execution slots (and queue places) of jobs whose workflow closed without giving them back (a
 * terminated workflow, a lost release), and signals the waiters that get them. Answers how many were freed.
 */
async function freeOrphanSlots(deps: ActivityDeps, input: { olderThanSeconds: number; limit: number }) {
  let freed = 0;
  for (const holder of await staleSlotHolders(deps.ds, input)) {
    if ((await workflowState(deps, holder.workflowId)) === 'RUNNING') continue;
    const limit = deps.config.execution.orgMaxConcurrentRuns;
    await signalGranted(deps, await releaseSlot(deps.ds, holder, { limit }));
    freed++;
  }
  return freed;
}

const untouched = `AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`;

export function createReconcilerActivities(deps: ActivityDeps) {
  return {
    async settleOrphans(input: { olderThanSeconds: number; limit: number }): Promise<{
      runs: number;
      deployments: number;
      knowledgeBaseJobs: number;
      integrationDeliveries: number;
      dataJobs: number;
      executionSlots: number;
    }> {
      const runs = await settleStale<{ run_id: string; kind: RunKind }>(
        deps,
        input,
        {
          sql: `SELECT run_id, kind FROM runs WHERE status IN ('QUEUED', 'STARTING', 'RUNNING') ${untouched}`,
          workflowId: (run) => workflowIdOf(`${run.kind}-run`, run.run_id),
        },
        (run, state) => {
          const cancelled = state === 'CANCELLED';
          const reason = reasonFor(state);
          return deps.ds.transaction(async (em) => {
            const moved = await transitionRun(em, run.run_id, cancelled ? 'CANCELLED' : 'ERROR', {
              status_detail: cancelled
                ? { reason: 'Cancelled', message: reason }
                : { error: reason, reason: 'WorkflowClosed' },
              completed_at: new Date(),
            });
            if (moved && run.kind === 'structure' && !cancelled) {
              await appendEvents(em, run.run_id, [
                {
                  type: 'StructureRunError',
                  origin: 'SYSTEM',
                  payload: { status: 'ERROR', status_detail: { error: reason } },
                },
              ]);
            }
            return Boolean(moved);
          });
        },
      );
      const deployments = await settleStale<{ deployment_id: string }>(
        deps,
        input,
        {
          sql: `SELECT deployment_id FROM deployments WHERE status IN ('QUEUED', 'DEPLOYING') ${untouched}`,
          workflowId: (d) => workflowIdOf('deployment', d.deployment_id),
        },
        async (d, state) =>
          Boolean(
            await deps.ds.transaction((em) =>
              transitionDeployment(em, d.deployment_id, 'ERROR', {
                status_detail: { reason: 'WorkflowClosed', message: reasonFor(state) },
                completed_at: new Date(),
              }),
            ),
          ),
      );
      const knowledgeBaseJobs = await settleStale<{ knowledge_base_job_id: string }>(
        deps,
        input,
        {
          sql: `SELECT knowledge_base_job_id FROM knowledge_base_jobs WHERE status IN ('QUEUED', 'RUNNING') ${untouched}`,
          workflowId: (j) => workflowIdOf('knowledge-base-job', j.knowledge_base_job_id),
        },
        async (j, state) => {
          const cancelled = state === 'CANCELLED';
          return Boolean(
            await transitionJob(deps.ds, j.knowledge_base_job_id, cancelled ? 'CANCELLED' : 'FAILED', {
              status_detail: { reason: cancelled ? 'Cancelled' : 'WorkflowClosed', message: reasonFor(state) },
            }),
          );
        },
      );
      const integrationDeliveries = await settleStale<{ delivery_id: string }>(
        deps,
        input,
        {
          sql: `SELECT delivery_id FROM integration_deliveries WHERE status IN ('QUEUED', 'RUNNING') ${untouched}`,
          workflowId: (d) => workflowIdOf('integration-delivery', d.delivery_id),
        },
        async (d, state) => {
          const cancelled = state === 'CANCELLED';
          return transitionDelivery(deps.ds, d.delivery_id, cancelled ? 'CANCELLED' : 'FAILED', {
            reason: cancelled ? 'Cancelled' : 'WorkflowClosed',
            message: reasonFor(state),
          });
        },
      );
      const dataJobs = await settleStale<{ data_job_id: string }>(
        deps,
        input,
        {
          sql: `SELECT data_job_id FROM data_jobs WHERE status IN ('QUEUED', 'RUNNING') ${untouched}`,
          workflowId: (j) => workflowIdOf('data-job', j.data_job_id),
        },
        async (j, state) => {
          const cancelled = state === 'CANCELLED';
          return transitionDataJob(deps.ds, j.data_job_id, cancelled ? 'CANCELLED' : 'FAILED', {
            status_detail: { reason: cancelled ? 'Cancelled' : 'WorkflowClosed', message: reasonFor(state) },
          });
        },
      );
      const executionSlots = await freeOrphanSlots(deps, input);
      if (runs || deployments || knowledgeBaseJobs || integrationDeliveries || dataJobs || executionSlots) {
        deps.log.warn(
          {
            settledRuns: runs,
            settledDeployments: deployments,
            settledJobs: knowledgeBaseJobs,
            settledDeliveries: integrationDeliveries,
            settledDataJobs: dataJobs,
            freedExecutionSlots: executionSlots,
          },
          'reconciler settled orphaned records',
        );
      }
      return { runs, deployments, knowledgeBaseJobs, integrationDeliveries, dataJobs, executionSlots };
    },
  };
}

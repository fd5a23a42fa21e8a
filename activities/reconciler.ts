import { WorkflowNotFoundError } from '@temporalio/client';
import type { ActivityDeps } from './deps';
import type { RunKind } from '../src/persistence/entities/run';
import { appendEvents, transitionDeployment, transitionRun } from '../src/services/runs/state';
import { workflowIdOf } from '../src/temporal/workflow-start';
import { transitionJob } from '../src/services/knowledge-bases/job-state';

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
 * Settles records whose workflow is gone: a run, deployment or knowledge base job still QUEUED/STARTING/RUNNING/DEPLOYING
 * while Temporal says its workflow closed (terminated, timed out, failed) or never existed. Such a row
 * would otherwise say "RUNNING" forever. Only rows untouched for `olderThanSeconds` are examined, so a
 * record whose workflow is being started right now is left alone.
 */
export function createReconcilerActivities(deps: ActivityDeps) {
  return {
    async settleOrphans(input: {
      olderThanSeconds: number;
      limit: number;
    }): Promise<{ runs: number; deployments: number; knowledgeBaseJobs: number }> {
      const runs: Array<{ run_id: string; kind: RunKind }> = await deps.ds.query(
        `SELECT run_id, kind FROM runs WHERE status IN ('QUEUED', 'STARTING', 'RUNNING')
           AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`,
        [input.olderThanSeconds, input.limit],
      );
      let settledRuns = 0;
      for (const run of runs) {
        const state = await workflowState(deps, workflowIdOf(`${run.kind}-run`, run.run_id));
        if (state === 'RUNNING') continue;
        const cancelled = state === 'CANCELLED';
        const reason = reasonFor(state);
        await deps.ds.transaction(async (em) => {
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
          if (moved) settledRuns++;
        });
      }

      const deployments: Array<{ deployment_id: string }> = await deps.ds.query(
        `SELECT deployment_id FROM deployments WHERE status IN ('QUEUED', 'DEPLOYING')
           AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`,
        [input.olderThanSeconds, input.limit],
      );
      let settledDeployments = 0;
      for (const d of deployments) {
        const state = await workflowState(deps, workflowIdOf('deployment', d.deployment_id));
        if (state === 'RUNNING') continue;
        const moved = await deps.ds.transaction((em) =>
          transitionDeployment(em, d.deployment_id, 'ERROR', {
            status_detail: { reason: 'WorkflowClosed', message: reasonFor(state) },
            completed_at: new Date(),
          }),
        );
        if (moved) settledDeployments++;
      }
      const jobs: Array<{ knowledge_base_job_id: string }> = await deps.ds.query(
        `SELECT knowledge_base_job_id FROM knowledge_base_jobs WHERE status IN ('QUEUED', 'RUNNING')
           AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2`,
        [input.olderThanSeconds, input.limit],
      );
      let settledJobs = 0;
      for (const j of jobs) {
        const state = await workflowState(deps, workflowIdOf('knowledge-base-job', j.knowledge_base_job_id));
        if (state === 'RUNNING') continue;
        const cancelled = state === 'CANCELLED';
        const moved = await transitionJob(deps.ds, j.knowledge_base_job_id, cancelled ? 'CANCELLED' : 'FAILED', {
          status_detail: { reason: cancelled ? 'Cancelled' : 'WorkflowClosed', message: reasonFor(state) },
        });
        if (moved) settledJobs++;
      }
      if (settledRuns || settledDeployments || settledJobs)
        deps.log.warn({ settledRuns, settledDeployments, settledJobs }, 'reconciler settled orphaned records');
      return { runs: settledRuns, deployments: settledDeployments, knowledgeBaseJobs: settledJobs };
    },
  };
}

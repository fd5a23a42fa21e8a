// Replay (docs/run-control.md#replay): a new run made from a finished one, with its args, input, run-level
// env vars and concurrency key (args and env vars may be overridden), on the resource's latest successful deployment unless the
// request pins one. The new run names the run it replays (replayed_from_run_id); the old one is not touched.
// Bulk replay does the same for the finished runs of one resource that a filter selects, at most
// MAX_BULK_REPLAY at a time, oldest first.
import { And, In, LessThan, MoreThanOrEqual } from 'typeorm';
import type { Caller } from '../../caller';
import { badRequest, conflict, notFound } from '../../../errors';
import { assertSecretRefs } from '../../../persistence/scoped';
import { CodeResource, Deployment, Run } from '../../../persistence/entities';
import type { CodeResourceKind } from '../../../persistence/entities/code-resource';
import { RUN_TERMINAL, type RunStatus } from '../../../persistence/entities/run';
import { findCodeResource, KIND_LABEL } from '../code-resources';
import { findRunOfKind } from './code-runs';
import { checkExecStrings, runEnvVars, startRun, type RequestEnvVar, type RunsDeps } from './begin';

/** What a replay request may change. */
export interface ReplayOverrides {
  args?: string[];
  env_vars?: RequestEnvVar[];
  /** A SUCCEEDED deployment of the run's resource to run on instead of its latest. */
  deployment_id?: string;
}

export interface BulkReplayFilter {
  /** Finished statuses to replay (default: FAILED, ERROR). */
  status?: RunStatus[];
  created_after?: string;
  created_before?: string;
  /** At most this many (default and maximum MAX_BULK_REPLAY). */
  limit?: number;
  deployment_id?: string;
}

export const MAX_BULK_REPLAY = 100;

/** Replays one finished run of `kind`: 409 while it is still queued or running. */
export async function replayCodeRun(
  deps: RunsDeps,
  caller: Caller,
  kind: CodeResourceKind,
  runId: string,
  overrides: ReplayOverrides,
): Promise<Run> {
  const original = await findRunOfKind(deps.ds, caller, kind, runId);
  if (!RUN_TERMINAL.includes(original.status)) {
    throw conflict(
      `The ${kind} run ${runId} is ${original.status}: only a finished run (${RUN_TERMINAL.join(', ')}) can be replayed`,
    );
  }
  const resource = await findCodeResource(deps.ds, caller, kind, original.resource_id!);
  const envVars = overrides.env_vars ? runEnvVars(overrides.env_vars) : original.env_vars;
  const args = overrides.args ?? original.args;
  checkExecStrings(args, envVars, '/body');
  if (overrides.env_vars) await assertSecretRefs(deps.ds, caller.organizationId, envVars, '/body/env_vars');
  const deployment = overrides.deployment_id
    ? await pinnedDeployment(deps, resource, overrides.deployment_id)
    : undefined;
  return startRun(deps, caller, resource, {
    args,
    envVars,
    input: original.input,
    deployment,
    replayedFromRunId: original.run_id,
    // Under the same key's limit as the original (bulk replays too): a replay must not run past a key's concurrency.
    concurrencyKey: original.concurrency_key ?? undefined,
  });
}

/** Replays the finished runs of one resource that `filter` selects, oldest first; answers the new runs. */
export async function replayCodeRuns(
  deps: RunsDeps,
  caller: Caller,
  kind: CodeResourceKind,
  resourceId: string,
  filter: BulkReplayFilter,
): Promise<Run[]> {
  const resource = await findCodeResource(deps.ds, caller, kind, resourceId);
  const statuses = filter.status?.length ? filter.status : (['FAILED', 'ERROR'] as RunStatus[]);
  const unfinished = statuses.filter((s) => !RUN_TERMINAL.includes(s));
  if (unfinished.length)
    throw badRequest(`Only finished runs can be replayed; not ${unfinished.join(', ')}`, '/body/status');
  const after = filter.created_after ? new Date(filter.created_after) : undefined;
  const before = filter.created_before ? new Date(filter.created_before) : undefined;
  // An empty window (created_after at or past created_before) selects no run, like any filter that matches none.
  const createdAt = [...(after ? [MoreThanOrEqual(after)] : []), ...(before ? [LessThan(before)] : [])];
  const runs = await deps.ds.getRepository(Run).find({
    where: {
      organization_id: caller.organizationId,
      resource_id: resource.resource_id,
      kind,
      status: In(statuses),
      ...(createdAt.length ? { created_at: And(...createdAt) } : {}),
    },
    order: { created_at: 'ASC', run_id: 'ASC' },
    take: Math.min(filter.limit ?? MAX_BULK_REPLAY, MAX_BULK_REPLAY),
  });
  const deployment = filter.deployment_id ? await pinnedDeployment(deps, resource, filter.deployment_id) : undefined;
  const replays: Run[] = [];
  // One at a time: each is an ordinary create (row and workflow), and a bounded batch keeps the api responsive.
  for (const original of runs) {
    replays.push(
      await startRun(deps, caller, resource, {
        args: original.args,
        envVars: original.env_vars,
        input: original.input,
        deployment,
        replayedFromRunId: original.run_id,
        concurrencyKey: original.concurrency_key ?? undefined,
      }),
    );
  }
  return replays;
}

async function pinnedDeployment(deps: RunsDeps, resource: CodeResource, deploymentId: string): Promise<Deployment> {
  const deployment = await deps.ds
    .getRepository(Deployment)
    .findOneBy({ deployment_id: deploymentId, resource_id: resource.resource_id });
  if (!deployment) throw notFound(`Deployment ${deploymentId} of ${KIND_LABEL[resource.kind]} ${resource.resource_id}`);
  if (deployment.status !== 'SUCCEEDED')
    throw conflict(`Deployment ${deploymentId} is ${deployment.status}: a run needs a SUCCEEDED deployment`);
  return deployment;
}

// Structure runs as the api sees them: create (row QUEUED + workflow start), read, list, cancel, logs.
// The api never writes a run's status: the workflow's activities do (run-lifecycle.ts).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DataSource, In } from 'typeorm';
import type { Caller } from '../api/http/auth';
import { badRequest, conflict, forbidden, notFound } from '../api/http/errors';
import type { PageRequest, Pagination } from '../api/http/pagination';
import { assertSecretRefs, pageInOrg } from '../persistence/scoped';
import type { Config } from '../config';
import { CodeResource, Run } from '../persistence/entities';
import type { EnvVar } from '../persistence/entities/code-resource';
import { RunStatus } from '../persistence/entities/run';
import { latestSuccessfulDeployment } from './deployments';
import { isTerminal } from './run-lifecycle';
import { cancelRunAndWait } from './run-cancellation';
import { workflowStart } from '../temporal/contracts';
import { insertAndStart } from '../temporal/workflow-records';

/** Linux refuses a single argv/env string longer than this (MAX_ARG_STRLEN, 128 KiB including the NUL). */
export const MAX_ARG_BYTES = 131_071;

export interface RunsDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
}

/** A run's own credential may only touch that run. */
export function assertRunAccess(caller: Caller, runId: string): void {
  if (caller.runId && caller.runId !== runId) throw forbidden(`This credential belongs to run ${caller.runId} and can only access that run`);
}

export async function findStructure(ds: DataSource, caller: Caller, structureId: string): Promise<CodeResource> {
  const structure = await ds.getRepository(CodeResource).findOneBy({
    resource_id: structureId, organization_id: caller.organizationId, kind: 'structure',
  });
  if (!structure) throw notFound('Structure');
  return structure;
}

export async function findStructureRun(ds: DataSource, caller: Caller, runId: string): Promise<Run> {
  assertRunAccess(caller, runId);
  const run = await ds.getRepository(Run).findOneBy({ run_id: runId, organization_id: caller.organizationId, kind: 'structure' });
  if (!run) throw notFound('Structure run');
  return run;
}

/** Arguments and env vars end up in execve(): no NUL characters, each string within the kernel's limit. */
function checkExecStrings(args: string[], envVars: EnvVar[], where: string) {
  args.forEach((a, i) => {
    if (a.includes('\u0000')) throw badRequest('Arguments must not contain NUL characters', `${where}/args/${i}`);
    if (Buffer.byteLength(a) > MAX_ARG_BYTES) throw badRequest(`Each argument is limited to ${MAX_ARG_BYTES} bytes`, `${where}/args/${i}`);
  });
  envVars.forEach((v, i) => {
    if (v.value.includes('\u0000')) throw badRequest('Env var values must not contain NUL characters', `${where}/env_vars/${i}/value`);
    if (Buffer.byteLength(v.name) + Buffer.byteLength(v.value) + 1 > MAX_ARG_BYTES) {
      throw badRequest(`Each env var is limited to ${MAX_ARG_BYTES} bytes`, `${where}/env_vars/${i}`);
    }
  });
}

export async function createStructureRun(
  deps: RunsDeps,
  caller: Caller,
  structureId: string,
  input: { args: string[]; env_vars: EnvVar[] },
): Promise<Run> {
  const envVars = input.env_vars.map((v) => ({ name: v.name, value: v.value, source: (v.source ?? 'manual').toLowerCase() as EnvVar['source'] }));
  checkExecStrings(input.args, envVars, '/body');
  const structure = await findStructure(deps.ds, caller, structureId);
  await assertSecretRefs(deps.ds, caller.organizationId, envVars, '/body/env_vars');
  return startRun(deps, caller, structure, { args: input.args, envVars, input: null });
}

/**
 * The one way a run of a structure, function or tool begins: on the resource's latest SUCCEEDED deployment
 * (409 without one), as a QUEUED row inserted together with its workflow (`<kind>-run-<uuid>`).
 */
export async function startRun(
  deps: RunsDeps,
  caller: Caller,
  resource: CodeResource,
  fields: { args: string[]; envVars: EnvVar[]; input: unknown },
): Promise<Run> {
  const deployment = await latestSuccessfulDeployment(deps.ds, resource.resource_id);
  if (!deployment) {
    throw conflict(`The ${resource.kind} ${resource.resource_id} has no successful deployment yet: deploy it and wait for status SUCCEEDED first`);
  }
  const now = new Date();
  const run: Run = {
    run_id: randomUUID(), kind: resource.kind, organization_id: caller.organizationId, resource_id: resource.resource_id, assistant_id: null,
    model: null, usage: null,
    deployment_id: deployment.deployment_id, status: 'QUEUED', status_detail: null, args: fields.args, env_vars: fields.envVars,
    input: fields.input, output: null, output_timestamp: null, started_at: null, completed_at: null,
    created_by: caller.actor, created_at: now, updated_at: now,
  };
  return insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: { kind: `${resource.kind}-run`, id: run.run_id, organizationId: run.organization_id, summary: `Run of ${resource.kind} ${resource.name}` },
    insert: (em) => em.getRepository(Run).save(run),
    // One workflow type drives every kind of code run; the execution activity picks the command by run kind.
    start: workflowStart.codeRun({
      runId: run.run_id,
      timeLimitSeconds: deps.config.runLimits.timeSeconds,
      heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
    }),
  });
}

export async function listStructureRuns(
  ds: DataSource,
  caller: Caller,
  structureId: string,
  page: PageRequest,
  statuses: RunStatus[] | undefined,
): Promise<{ items: Run[]; pagination: Pagination }> {
  const structure = await findStructure(ds, caller, structureId);
  return pageRuns(ds, caller, { resource_id: structure.resource_id }, page, statuses);
}

/** Runs of one resource or assistant of the caller's organization, newest first, optionally by status. */
export function pageRuns(
  ds: DataSource, caller: Caller, owner: { resource_id: string } | { assistant_id: string }, page: PageRequest, statuses: RunStatus[] | undefined,
): Promise<{ items: Run[]; pagination: Pagination }> {
  return pageInOrg(ds, Run, caller.organizationId, page, { ...owner, ...(statuses?.length ? { status: In(statuses) } : {}) }, {
    created_at: 'DESC', run_id: 'DESC',
  });
}

/** Cancels a structure run: see cancelRunAndWait. */
export async function cancelStructureRun(deps: RunsDeps, caller: Caller, runId: string): Promise<Run> {
  return cancelRunAndWait(deps, caller, await findStructureRun(deps.ds, caller, runId));
}

/** A run's stdout/stderr lines in the order they were read; the caller has already checked access. */
export async function runLogLines(ds: DataSource, runId: string): Promise<string[]> {
  const rows: Array<{ line: string }> = await ds.query(`SELECT line FROM run_logs WHERE run_id = $1 ORDER BY seq`, [runId]);
  return rows.map((r) => r.line);
}

export async function structureRunLogs(ds: DataSource, caller: Caller, runId: string): Promise<string[]> {
  return runLogLines(ds, (await findStructureRun(ds, caller, runId)).run_id);
}

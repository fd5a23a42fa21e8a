// Runs of code (structures, functions, tools) as the api finds and lists them, whatever their kind: a run's
// own credential (GT_CLOUD_API_KEY) may only touch its run; every query is scoped to the caller's organization.
import { In, type DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { forbidden, notFound } from '../../../errors';
import type { PageRequest, Pagination } from '../../../persistence/pagination';
import { CodeResource, Run } from '../../../persistence/entities';
import type { CodeResourceKind } from '../../../persistence/entities/code-resource';
import { RunStatus } from '../../../persistence/entities/run';
import { pageInOrg } from '../../../persistence/scoped';
import { findOnePrepared } from '../../../persistence/direct-sql';
import { findCodeResource, KIND_LABEL } from '../code-resources';

/** A run's own credential may only touch that run. */
export function assertRunAccess(caller: Caller, runId: string): void {
  if (caller.runId && caller.runId !== runId)
    throw forbidden(`This credential belongs to run ${caller.runId} and can only access that run`);
}

export async function findRunOfKind(
  ds: DataSource,
  caller: Caller,
  kind: CodeResourceKind,
  runId: string,
): Promise<Run> {
  assertRunAccess(caller, runId);
  const run = await findOnePrepared(ds, Run, { run_id: runId, organization_id: caller.organizationId, kind });
  if (!run) throw notFound(`${KIND_LABEL[kind]} run`);
  return run;
}

/** Runs of one resource or assistant of the caller's organization, newest first, optionally by status. */
export function pageRuns(
  ds: DataSource,
  caller: Caller,
  owner: { resource_id: string } | { assistant_id: string },
  page: PageRequest,
  statuses: RunStatus[] | undefined,
): Promise<{ items: Run[]; pagination: Pagination }> {
  return pageInOrg(
    ds,
    Run,
    caller.organizationId,
    page,
    { ...owner, ...(statuses?.length ? { status: In(statuses) } : {}) },
    {
      created_at: 'DESC',
      run_id: 'DESC',
    },
  );
}

export async function listRunsOfKind(
  ds: DataSource,
  caller: Caller,
  kind: CodeResourceKind,
  resourceId: string,
  page: PageRequest,
  statuses: RunStatus[] | undefined,
): Promise<{ items: Run[]; pagination: Pagination }> {
  const resource = await findCodeResource(ds, caller, kind, resourceId);
  return pageRuns(ds, caller, { resource_id: resource.resource_id }, page, statuses);
}

/** A run's stdout/stderr lines in the order they were read; the caller has already checked access. */
export async function runLogLines(ds: DataSource, runId: string): Promise<string[]> {
  const rows: Array<{ line: string }> = await ds.query(`SELECT line FROM run_logs WHERE run_id = $1 ORDER BY seq`, [
    runId,
  ]);
  return rows.map((r) => r.line);
}

export async function runLogsOfKind(
  ds: DataSource,
  caller: Caller,
  kind: CodeResourceKind,
  runId: string,
): Promise<string[]> {
  return runLogLines(ds, (await findRunOfKind(ds, caller, kind, runId)).run_id);
}

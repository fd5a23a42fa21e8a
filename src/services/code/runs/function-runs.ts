// Function runs as the api sees them. A function run is a row of `runs` (kind 'function') driven by the same
// workflow as a structure run (codeRunWorkflow, id function-run-<uuid>); only the command differs (the
// runtime's shim calls the handler, see execution.ts) and the output comes from the shim's result file.
import path from 'node:path';
import type { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { CodeResource, Run } from '../../../persistence/entities';
import { readManifest } from '../../../runtime/manifest';
import { readRun } from './lifecycle';
import { createRunOf, RunsDeps, startRun } from './begin';
import { awaitEnd } from '../../../jobs/await-end';
import { RUN_JOB } from '../../../jobs/kinds';
import { heldByPausedQueue } from '../../../jobs/admission-waiting';
import type { RunUpdatesHub } from '../../../persistence/run-updates-hub';

/** The event a handler receives. */
export interface FunctionInput {
  body: unknown;
  query_params: Record<string, string>;
}

/** Query parameters as handlers see them: strings; a repeated key keeps its last value. */
export function queryParamsOf(query: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v[v.length - 1] : v;
  }
  return out;
}

/**
 * Creates a run (404 for an unknown function, 409 without a successful deployment) and waits (up to
 * FUNCTION_EXECUTE_TIMEOUT_SECONDS) for it to end; returns the latest record.
 */
export async function executeFunction(
  deps: RunsDeps,
  caller: Caller,
  functionId: string,
  input: FunctionInput,
): Promise<Run> {
  return waitForEnd(deps, await createRunOf(deps, caller, 'function', functionId, { args: [], envVars: [], input }));
}

/** Starts a run of `resource` with `input` and waits for it to end, as executeFunction does. */
export async function startAndWait(
  deps: RunsDeps,
  caller: Caller,
  resource: CodeResource,
  input: unknown,
): Promise<Run> {
  return waitForEnd(deps, await startRun(deps, caller, resource, { args: [], envVars: [], input }));
}

/**
 * The run once it ended, waited for up to FUNCTION_EXECUTE_TIMEOUT_SECONDS; not while its queue is paused (it
 * would wait the whole way): then the run as it is, QUEUED.
 */
export async function waitForEnd(deps: RunsDeps, run: Run): Promise<Run> {
  const [ended] = await awaitEnd(deps.ds, RUN_JOB, [run.run_id], {
    read: async () => [await readRun(deps.ds, run.run_id)],
    until: (r) => r.status === 'QUEUED' && heldByPausedQueue(r.status_detail),
    timeoutMs: deps.config.functionExecuteTimeoutSeconds * 1000,
    hub: deps.runUpdates,
  });
  return ended;
}

/** Build directories are immutable, so a deployment's runtime path never changes once read. */
const runtimePathCache = new Map<string, string>();

/**
 * `runtime_path` of each function or tool run: the absolute path of its deployment's main file (the file whose
 * handler runs; a tool's tool file);
 * the build directory when its manifest cannot be read (a deployment deleted from disk), else ''.
 */
export async function runtimePathsOf(ds: DataSource, runs: Run[]): Promise<Map<string, string>> {
  const fallback = new Map<string, string>();
  const missing = [
    ...new Set(runs.map((r) => r.deployment_id).filter((id): id is string => !!id && !runtimePathCache.has(id))),
  ];
  if (missing.length) {
    const rows: Array<{ deployment_id: string; build_path: string | null }> = await ds.query(
      `SELECT deployment_id, build_path FROM deployments WHERE deployment_id = ANY($1::uuid[])`,
      [missing],
    );
    for (const row of rows) {
      if (!row.build_path) continue;
      try {
        const m = await readManifest(row.build_path);
        runtimePathCache.set(row.deployment_id, path.join(m.workDir, m.mainFile));
      } catch {
        fallback.set(row.deployment_id, row.build_path); // not cached: the build may come back
      }
    }
  }
  const out = new Map<string, string>();
  for (const r of runs) {
    const id = r.deployment_id ?? '';
    out.set(r.run_id, runtimePathCache.get(id) ?? fallback.get(id) ?? '');
  }
  return out;
}

// Tool runs: rows of `runs` (kind 'tool', workflow tool-run-<uuid>) driven by the same workflow as function
// runs; the tool shim (execution.ts) either describes the tool (input `{describe: true}`) or runs one
// activity (input `{activity, params}`), and its artifact dict becomes the run's output.
import type { Caller } from '../../caller';
import { notFound } from '../../../errors';
import { Run } from '../../../persistence/entities';
import { findCodeResource } from '../code-resources';
import { startAndWait, waitForEnd } from './function-runs';
import { startRun } from './begin';
import type { RunsDeps } from './begin';

export interface ToolDescription {
  name: string;
  activities: Array<{ name: string; description: string; schema: unknown }>;
}

/** What the tool endpoints answer: the run's output, or why there is none (`{error, tool_run_id}`). */
export type ToolCallResult = { ok: true; run: Run; output: unknown } | { ok: false; run: Run; error: string };

/** What a tool call answers for its run (also a repeated Idempotency-Key's, from the run as it is now). */
export function resultOf(run: Run): ToolCallResult {
  if (run.status === 'SUCCEEDED') return { ok: true, run, output: run.output };
  if (!['FAILED', 'ERROR', 'CANCELLED'].includes(run.status)) {
    return {
      ok: false,
      run,
      error: `Tool run ${run.run_id} has not ended yet (${run.status}); poll GET /api/tool-runs/${run.run_id}`,
    };
  }
  const detail = (run.status_detail ?? {}) as { message?: string | null; error?: string };
  return {
    ok: false,
    run,
    error: `Tool run ${run.run_id} ended ${run.status}: ${detail.message ?? detail.error ?? 'no detail'}`,
  };
}

/**
 * Runs `activity` once with `params`; 404 when the tool has no such activity (as its shim reports). `once` makes
 * the run (an MCP call's idempotency key makes it once per key); the call waits for it to end either way.
 */
export async function runToolActivity(
  deps: RunsDeps,
  caller: Caller,
  toolId: string,
  activity: string,
  params: unknown,
  once: (create: () => Promise<Run>) => Promise<Run> = (create) => create(),
): Promise<ToolCallResult> {
  const tool = await findCodeResource(deps.ds, caller, 'tool', toolId);
  const run = await waitForEnd(
    deps,
    await once(() => startRun(deps, caller, tool, { args: [], envVars: [], input: { activity, params } })),
  );
  const detail = (run.status_detail ?? {}) as { message?: string | null };
  if (run.status === 'FAILED' && detail.message?.startsWith('UnknownActivity:')) throw notFound('Activity');
  return resultOf(run);
}

export async function describeTool(deps: RunsDeps, caller: Caller, toolId: string): Promise<ToolCallResult> {
  const tool = await findCodeResource(deps.ds, caller, 'tool', toolId);
  return resultOf(await startAndWait(deps, caller, tool, { describe: true }));
}

/** The OpenAPI 3.1 document GriptapeCloudToolTool reads: one `POST /activities/{name}` per activity. */
export function toolOpenApi(d: ToolDescription, toolId: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const a of d.activities) {
    paths[`/activities/${a.name}`] = {
      post: {
        operationId: a.name,
        description: a.description,
        requestBody: { required: true, content: { 'application/json': { schema: a.schema ?? { type: 'object' } } } },
        responses: {
          200: {
            description: "The activity's artifact",
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    };
  }
  return { openapi: '3.1.0', info: { title: d.name, version: '1.0.0', description: `Tool ${toolId}` }, paths };
}

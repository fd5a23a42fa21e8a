// An MCP tool call (docs/mcp.md): through the same service as its REST route, so that it is a run or a
// job like any other (admission, the console, the Temporal UI), once per `_meta.idempotency_key`. Whatever goes
// wrong is the call's result with `isError` and a message, never a failed request: bad arguments, a refused role,
// a run that failed.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps';
import type { Caller } from '../../services/caller';
import { atLeast, roleRefused } from '../../services/accounts/roles';
import { OPEN_RUN_STATUSES } from '../../services/code/runs/cancellation';
import { cancelStructureRun, createStructureRun } from '../../services/code/runs/structure-runs';
import { waitForEnd } from '../../services/code/runs/function-runs';
import { createRunOf } from '../../services/code/runs/begin';
import { bodyHashOf, createIdempotently, MAX_IDEMPOTENCY_KEY_LENGTH } from '../../jobs/idempotency';
import type { Run } from '../../persistence/entities';
import { runToolActivity } from '../../services/code/runs/tool-runs';
import { eventsAfter } from '../../services/code/runs/events';
import { readRun } from '../../services/code/runs/lifecycle';
import { queryKnowledgeBase } from '../../services/knowledge/retrieval/run-query';
import { searchKnowledgeBase } from '../../services/knowledge/retrieval/search';
import { queryRetrieverRequest } from '../../services/knowledge/retrieval/retrievers';
import { HttpError } from '../../errors';
import { validatorFor } from '../schemas/registry';
import type { McpTool } from './catalog';

/** How often a structure run's new events are sent as progress, and its end looked for. */
const POLL_MS = 250;

export interface CallContext {
  /** Aborted when the client cancels the call (notifications/cancelled) or goes away. */
  signal: AbortSignal;
  /** `_meta.idempotency_key` of the call: a repeat with the same arguments attaches to the first call's run. */
  idempotencyKey?: string;
  /** Sends a progress notification, when the client asked for them (a progress token). */
  progress?: (progress: number, message: string) => Promise<void>;
}

const text = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }],
  ...(isError ? { isError: true } : {}),
});
export const toolError = (message: string) => text(message, true);

/** Validators by schema (a tool activity's is its own); bounded, as schemas come from user code. */
const validators = new Map<string, ReturnType<typeof validatorFor>>();
const MAX_VALIDATORS = 500;

/** The arguments' problems, or undefined; a schema ajv cannot compile leaves the checking to the tool. */
function problemsOf(tool: McpTool, args: Record<string, unknown>): string | undefined {
  const key = JSON.stringify(tool.inputSchema);
  let validate = validators.get(key);
  if (!validate) {
    try {
      validate = validatorFor(tool.inputSchema);
    } catch {
      return undefined;
    }
    if (validators.size >= MAX_VALIDATORS) validators.clear();
    validators.set(key, validate);
  }
  if (validate(args)) return undefined;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}

export async function callTool(
  deps: Deps,
  caller: Caller,
  tool: McpTool,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<CallToolResult> {
  // A call starts work: a member's, as the REST routes it stands for.
  if (!atLeast(caller.role, 'member')) return toolError(roleRefused(caller.role, 'member', tool.name).message);
  const problems = problemsOf(tool, args);
  if (problems) return toolError(`Bad arguments for ${tool.name}: ${problems}`);
  const key = call.idempotencyKey;
  if (key !== undefined && (typeof key !== 'string' || key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH))
    return toolError(`_meta.idempotency_key must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  try {
    return await dispatch(deps, caller, tool, args, call);
  } catch (err) {
    if (err instanceof HttpError) return toolError(`${err.type}: ${err.errors.map((e) => e.message).join('; ')}`);
    deps.log.error({ err, tool: tool.name }, 'an MCP tool call failed');
    return toolError(`${tool.name} failed: an internal error (see the api's log)`);
  }
}

/**
 * Makes the call's run once per idempotency key (a REST create's Idempotency-Key, in the same table, scoped to
 * the MCP tool): a retried call with the key and the same arguments gets the first call's run, and waits on it;
 * other arguments are refused (IdempotencyKeyReusedError). Without a key, every call makes a run.
 */
function onceFor(deps: Deps, caller: Caller, tool: McpTool, args: Record<string, unknown>, key: string | undefined) {
  return async (create: () => Promise<Run>): Promise<Run> => {
    if (key === undefined) return create();
    const claim = {
      organizationId: caller.organizationId,
      operation: `mcp:${tool.kind}`,
      target: tool.activity ? `${tool.resourceId}/${tool.activity}` : tool.resourceId,
      key,
      bodyHash: bodyHashOf(args),
      ttlSeconds: deps.config.idempotencyTtlSeconds,
    };
    const replay = (record: { id: string }) => readRun(deps.ds, record.id);
    return (await createIdempotently(deps.ds, claim, create, replay, deps.temporal)).value;
  };
}

async function dispatch(
  deps: Deps,
  caller: Caller,
  tool: McpTool,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<CallToolResult> {
  const once = onceFor(deps, caller, tool, args, call.idempotencyKey);
  const query = { query: args.query as string, query_args: { count: (args.count as number | undefined) ?? 5 } };
  switch (tool.kind) {
    case 'query_knowledge_base':
      return text({ entries: (await queryKnowledgeBase(deps, caller, tool.resourceId, query)).entries });
    case 'search_knowledge_base': {
      const search = await searchKnowledgeBase(deps, caller, tool.resourceId, query);
      return text({ answer: search.result, entries: search.entries });
    }
    case 'query_retriever':
      return text({
        outputs: (await queryRetrieverRequest(deps, caller, tool.resourceId, { query: query.query })).outputs,
      });
    case 'execute_function': {
      const input = { body: args.body ?? null, query_params: {} };
      const run = await waitForEnd(
        deps,
        await once(() => createRunOf(deps, caller, 'function', tool.resourceId, { args: [], envVars: [], input })),
      );
      if (run.status === 'SUCCEEDED') return text(run.output ?? null);
      if (OPEN_RUN_STATUSES.includes(run.status))
        return toolError(
          `Function run ${run.run_id} has not ended within FUNCTION_EXECUTE_TIMEOUT_SECONDS (it is ${run.status}): ` +
            `poll GET /api/function-runs/${run.run_id}`,
        );
      return toolError(endedMessage('Function', run));
    }
    case 'run_structure':
      return runStructure(deps, caller, tool, (args.args as string[] | undefined) ?? [], call, once);
    case 'run_tool_activity': {
      const r = await runToolActivity(deps, caller, tool.resourceId, tool.activity!, args, once);
      return r.ok ? text(r.output ?? null) : toolError(`Tool run ${r.run.run_id}: ${r.error}`);
    }
  }
}

function endedMessage(what: string, run: { run_id: string; status: string; status_detail: unknown }): string {
  const detail = (run.status_detail ?? {}) as { message?: string | null; error?: string };
  return `${what} run ${run.run_id} ended ${run.status}: ${detail.message ?? detail.error ?? 'no detail'}`;
}

/**
 * Runs the structure and waits for its end, sending each new event's type as progress; a cancelled call cancels
 * the run (the run's cancel, as CancelStructureRun does).
 */
async function runStructure(
  deps: Deps,
  caller: Caller,
  tool: McpTool,
  args: string[],
  call: CallContext,
  once: ReturnType<typeof onceFor>,
): Promise<CallToolResult> {
  const started = await once(() => createStructureRun(deps, caller, tool.resourceId, { args, env_vars: [] }));
  const runId = started.run_id;
  let seq = 0;
  let sent = 0;
  for (;;) {
    if (call.signal.aborted) {
      const cancelled = await cancelStructureRun(deps, caller, runId);
      return toolError(`Structure run ${runId} was cancelled by the client: it ended ${cancelled.status}`);
    }
    const run = await readRun(deps.ds, runId);
    if (call.progress) {
      for (const event of await eventsAfter(deps.ds, runId, seq, 100)) {
        seq = event.seq;
        await call.progress(++sent, `${event.type} (structure run ${runId})`);
      }
    }
    if (!OPEN_RUN_STATUSES.includes(run.status)) {
      if (run.status === 'SUCCEEDED') return text({ structure_run_id: runId, output: run.output ?? null });
      return toolError(endedMessage('Structure', run));
    }
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, POLL_MS);
      call.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(undefined)), { once: true });
    });
  }
}

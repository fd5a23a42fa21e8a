// Assistant runs as the api sees them: create (rows QUEUED + workflow start), read, list, cancel, events.
// The workflow (workflows/assistant-run.ts) and its activities do the rest.
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Caller } from '../caller';
import { conflict, notFound } from '../../errors';
import type { PageRequest, Pagination } from '../../persistence/pagination';
import { ASSISTANT_ID_LISTS, AssistantResourceIds, AssistantRun } from '../../persistence/entities/assistant';
import { newRunRow, Run, RUN_TERMINAL, RunStatus } from '../../persistence/entities/run';
import { assertIdsInOrg } from '../../persistence/scoped';
import { userMessageOf } from './prompt';
import { assertAssistantIds, findAssistant } from './assistants';
import { cancelRunAndWait } from '../code/runs/cancellation';
import { type RunsDeps } from '../code/runs/begin';
import { pageRuns } from '../code/runs/code-runs';
import { createThread } from '../conversations/threads';
import { workflowStart } from '../../temporal/contracts';
import { insertAndStart } from '../../jobs/create';
import type { RetryPolicyRequest } from '../../temporal/retry-policy';
import { runPolicy } from '../code/runs/retries';

type IdLists = { [K in keyof AssistantResourceIds]?: string[] | null } & {
  [K in keyof AssistantResourceIds as `additional_${K}`]?: string[] | null;
};

export interface CreateAssistantRunRequest extends IdLists {
  args?: string[];
  input?: string | null;
  stream?: boolean;
  /** `provider/model` (see docs/assistants.md, Model providers); the configured default when absent. */
  model?: string | null;
  new_thread?: boolean;
  thread_id?: string | null;
  /** docs/run-control.md#concurrency-keys-and-limits */
  concurrency_key?: string;
  /** This run's own policy (null: never retried); absent: the assistant's. */
  retry_policy?: RetryPolicyRequest | null;
}

/** An assistant run: the shared run row and its assistant-only fields. */
export interface AssistantRunRecord {
  run: Run;
  details: AssistantRun;
}

/**
 * The run's effective ids: the request's list when given, else the assistant's, then the request's
 * `additional_*` list; duplicates dropped, order kept.
 */
export function effectiveIds(assistant: AssistantResourceIds, request: IdLists): AssistantResourceIds {
  const ids = {} as AssistantResourceIds;
  for (const list of ASSISTANT_ID_LISTS) {
    ids[list] = [...new Set([...(request[list] ?? assistant[list]), ...(request[`additional_${list}`] ?? [])])];
  }
  return ids;
}

/**
 * Creates the run and starts its workflow (assistant-run-<uuid>). `thread_id` wins over `new_thread`; a new
 * thread is created first (named after the run) and answered in `thread_id`. `runId`: an id chosen by the
 * caller (integration deliveries derive it from the delivery, so a retry finds the run).
 */
export async function createAssistantRun(
  deps: RunsDeps,
  caller: Caller,
  assistantId: string,
  body: CreateAssistantRunRequest,
  runId: string = randomUUID(),
  replayedFromRunId?: string,
): Promise<AssistantRunRecord> {
  const assistant = await findAssistant(deps.ds, caller, assistantId);
  const ids = effectiveIds(assistant, body);
  await assertAssistantIds(deps.ds, caller.organizationId, ids);
  const retryPolicy = runPolicy(assistant, body.retry_policy, '/body/retry_policy');
  const input = body.input ?? assistant.input ?? null;
  const args = body.args ?? [];
  if (userMessageOf(input, args) === '') {
    // Whether the request needs `input` depends on the assistant's own: a conflict with it, not a malformed request.
    throw conflict("The run has nothing to say to the model: give `input` (or set the assistant's) or `args`");
  }
  let threadId: string | null = null;
  if (body.thread_id) {
    await assertIdsInOrg(deps.ds, 'thread', caller.organizationId, [body.thread_id], '/body/thread_id');
    threadId = body.thread_id;
  } else if (body.new_thread)
    threadId = (await createThread(deps.ds, caller, { name: `Assistant run ${runId}` })).thread_id;

  const now = new Date();
  const run = newRunRow(
    {
      run_id: runId,
      kind: 'assistant',
      organization_id: caller.organizationId,
      assistant_id: assistant.assistant_id,
      args,
      input,
      model: body.model ?? null,
      created_by: caller.actor,
      replayed_from_run_id: replayedFromRunId ?? null,
      concurrency_key: body.concurrency_key ?? null,
      retry_policy: retryPolicy,
    },
    now,
  );
  const details: AssistantRun = {
    run_id: runId,
    thread_id: threadId,
    stream: body.stream ?? false,
    ...ids,
    transcript: [],
    tool_definitions: null,
  };
  await insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: {
      kind: 'assistant-run',
      id: runId,
      organizationId: caller.organizationId,
      summary: `Run of assistant ${assistant.name}`,
    },
    insert: async (em) => {
      await em.getRepository(Run).save(run);
      await em.getRepository(AssistantRun).save(details);
    },
    undo: (em) => em.query(`DELETE FROM runs WHERE run_id = $1`, [runId]),
    start: workflowStart.assistantRun({
      runId,
      timeLimitSeconds: deps.config.runJob.timeLimitSeconds,
      heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
      maxSteps: deps.config.assistantMaxSteps,
      ...(retryPolicy ? { retryPolicy } : {}),
    }),
  });
  return { run, details };
}

async function withDetails(ds: DataSource, runs: Run[]): Promise<AssistantRunRecord[]> {
  if (!runs.length) return [];
  const details = await ds
    .getRepository(AssistantRun)
    .createQueryBuilder('d')
    .where('d.run_id IN (:...ids)', { ids: runs.map((r) => r.run_id) })
    .getMany();
  const byId = new Map(details.map((d) => [d.run_id, d]));
  return runs.map((run) => ({ run, details: byId.get(run.run_id)! }));
}

export async function findAssistantRun(ds: DataSource, caller: Caller, runId: string): Promise<AssistantRunRecord> {
  const run = await ds
    .getRepository(Run)
    .findOneBy({ run_id: runId, organization_id: caller.organizationId, kind: 'assistant' });
  if (!run) throw notFound('Assistant run');
  return (await withDetails(ds, [run]))[0];
}

export async function listAssistantRuns(
  ds: DataSource,
  caller: Caller,
  assistantId: string,
  page: PageRequest,
  statuses: RunStatus[] | undefined,
): Promise<{ items: AssistantRunRecord[]; pagination: Pagination }> {
  const assistant = await findAssistant(ds, caller, assistantId);
  const { items, pagination } = await pageRuns(ds, caller, { assistant_id: assistant.assistant_id }, page, statuses);
  return { items: await withDetails(ds, items), pagination };
}

/** Cancels the run: its model stream is aborted and its child runs are cancelled (see cancelRunAndWait). */
export async function cancelAssistantRun(deps: RunsDeps, caller: Caller, runId: string): Promise<AssistantRunRecord> {
  const { run, details } = await findAssistantRun(deps.ds, caller, runId);
  return { run: await cancelRunAndWait(deps, caller, run), details };
}

/**
 * Replays a finished assistant run (docs/run-control.md#replay): a new run of the same assistant with the run's
 * input, args, model, stream flag, id lists, thread (so it sees the thread as it is now) and concurrency key, each of input, args
 * and model overridable. 409 while the run is queued or running.
 */
export async function replayAssistantRun(
  deps: RunsDeps,
  caller: Caller,
  runId: string,
  overrides: { input?: string | null; args?: string[]; model?: string | null },
): Promise<AssistantRunRecord> {
  const { run, details } = await findAssistantRun(deps.ds, caller, runId);
  if (!RUN_TERMINAL.includes(run.status)) {
    throw conflict(
      `The assistant run ${runId} is ${run.status}: only a finished run (${RUN_TERMINAL.join(', ')}) can be replayed`,
    );
  }
  const ids = Object.fromEntries(ASSISTANT_ID_LISTS.map((list) => [list, details[list]]));
  return createAssistantRun(
    deps,
    caller,
    run.assistant_id!,
    {
      ...ids,
      input: overrides.input !== undefined ? overrides.input : typeof run.input === 'string' ? run.input : null,
      args: overrides.args ?? run.args,
      model: overrides.model !== undefined ? overrides.model : run.model,
      stream: details.stream,
      thread_id: details.thread_id,
      concurrency_key: run.concurrency_key ?? undefined,
    },
    randomUUID(),
    run.run_id,
  );
}

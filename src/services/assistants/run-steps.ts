// The steps of an assistant run (workflows/assistant-run.ts) as the worker writes them: the functions offered
// to the model and the start, the prompt of each model call and the turn it answers, the results of function
// calls, and the terminal write with the thread's new exchange. Each step is idempotent, so a retried
// activity is harmless. Streaming the model and heartbeats stay in the activities.
import type { DataSource } from 'typeorm';
import type { Completion, CompletionRequest } from '../../drivers/model/types';
import { AssistantRun, type AssistantToolDefinition, type TranscriptEntry } from '../../persistence/entities/assistant';
import { CodeResource } from '../../persistence/entities/code-resource';
import { ModelUsage, Run, RunStatus, type RunLimits } from '../../persistence/entities/run';
import { griptapeId } from '../../ids';
import { finishRun } from '../code/runs/lifecycle';
import { markRetrying } from '../code/runs/retries';
import type { RunEnding, RunRetryInput } from '../../temporal/contracts';
import { appendEvents, transitionRun } from '../code/runs/state';
import { appendThreadMessage, threadExchanges } from '../conversations/threads';
import { messageText, textArtifactJson } from '../conversations/thread-artifacts';
import { cachedDescription } from './child-runs';
import { assistantToolDefinitions, DescribedTool, offeredTools, promptTurns, resultText, textArtifact } from './prompt';
import { retrievalSources } from './retrieval-calls';
import { rulesetInstructions } from './rulesets';
import { finishEvent, now, startEvents } from './run-events';
import { appendTranscript, userMessageOfRun } from './transcript';
import type { AssistantRunRecord } from './runs';

/** `approvals`: the calls whose tools require approval (docs/waitpoints.md); absent when none does. */
export type ModelStepResult = { kind: 'answer' } | { kind: 'tool-calls'; toolCallIds: string[]; approvals?: string[] };

/**
 * The functions offered to the model (stored on the run), then → RUNNING with the assistant's
 * StartStructureRunEvent. An ending when a tool could not be described.
 */
export async function resolveAssistantTools(
  ds: DataSource,
  loaded: AssistantRunRecord,
  failures: Array<{ toolId: string; error: string }>,
  /** What the worker enforces (limits.ts `recordedLimits`), recorded with RUNNING. */
  limits?: RunLimits,
): Promise<RunEnding | undefined> {
  const { run, details } = loaded;
  const resources = await ds.getRepository(CodeResource).findBy(
    [...details.structure_ids, ...details.tool_ids].map((id) => ({
      resource_id: id,
      organization_id: run.organization_id,
    })),
  );
  const byId = new Map(resources.map((r) => [r.resource_id, r]));
  const described: DescribedTool[] = [];
  for (const toolId of details.tool_ids) {
    const tool = byId.get(toolId);
    const description = tool && (await cachedDescription(ds, tool));
    if (!description) {
      const failure = failures.find((f) => f.toolId === toolId)?.error;
      return {
        status: 'FAILED',
        reason: 'ToolUnavailable',
        error: `Tool ${tool ? `"${tool.name}" ` : ''}${toolId} could not be described${failure ? `: ${failure}` : ' (see its tool runs)'}`,
      };
    }
    described.push(description);
  }
  const structures = details.structure_ids.flatMap((id) => {
    const s = byId.get(id);
    return s ? [{ id, name: s.name, description: s.description }] : [];
  });
  const sources = await retrievalSources(ds, run.organization_id, details);
  // A knowledge base or retriever deleted since the assistant named it ends the run, named (never skipped).
  const gone = [
    ...details.knowledge_base_ids.filter((id) => !sources.some((s) => s.id === id)).map((id) => `knowledge base ${id}`),
    ...details.retriever_ids.filter((id) => !sources.some((s) => s.id === id)).map((id) => `retriever ${id}`),
  ];
  if (gone.length)
    return {
      status: 'FAILED',
      reason: 'RetrievalSourceNotFound',
      error: `The ${gone.join(', the ')} no longer exists`,
    };
  const definitions = assistantToolDefinitions(structures, described, sources);
  await ds.transaction(async (em) => {
    await em.query(`UPDATE assistant_runs SET tool_definitions = $2::jsonb WHERE run_id = $1`, [
      run.run_id,
      JSON.stringify(definitions),
    ]);
    const startedAt = new Date();
    const events = startEvents(run, userMessageOfRun(run), startedAt);
    await transitionRun(em, run.run_id, 'RUNNING', { started_at: startedAt, limits }, undefined, events);
  });
  return undefined;
}

/** What a model turn asks of the workflow next: answer, or the function calls to run (and which need approval). */
export function stepResultOf(turn: TranscriptEntry, definitions: AssistantToolDefinition[] | null): ModelStepResult {
  if (turn.role !== 'assistant' || !turn.toolCalls?.length) return { kind: 'answer' };
  const approvals = turn.toolCalls
    .filter((c) => {
      const target = definitions?.find((d) => d.name === c.name)?.target;
      return target?.kind === 'tool' && target.approval !== undefined;
    })
    .map((c) => c.id);
  return {
    kind: 'tool-calls',
    toolCallIds: turn.toolCalls.map((c) => c.id),
    ...(approvals.length ? { approvals } : {}),
  };
}

/** The turn the model already answered in step `step` (a retried step is not asked again). */
export const recordedTurn = ({ details }: AssistantRunRecord, step: number) =>
  details.transcript.find((t) => t.step === step && t.role === 'assistant');

/** The model call of the next step: rulesets, thread, user message, this run's turns so far, offered functions. */
export async function modelRequest(
  ds: DataSource,
  { run, details }: AssistantRunRecord,
): Promise<Omit<CompletionRequest, 'signal'>> {
  const turns = promptTurns({
    rulesets: await rulesetInstructions(ds, run.organization_id, details.ruleset_ids),
    history: details.thread_id
      ? (await threadExchanges(ds, details.thread_id)).map((m) => ({
          input: messageText(m.input),
          output: messageText(m.output),
        }))
      : [],
    userMessage: userMessageOfRun(run),
    transcript: details.transcript,
  });
  return {
    model: run.model ?? undefined,
    turns,
    tools: offeredTools(details.tool_definitions ?? []),
    stream: details.stream,
  };
}

/** The answer's turn joins the transcript (once); usage and model go on the run, and a final answer is its output. */
export async function recordModelTurn(
  ds: DataSource,
  run: Run,
  step: number,
  completion: Completion,
  definitions: AssistantToolDefinition[] | null,
): Promise<ModelStepResult> {
  const turn: TranscriptEntry = completion.toolCalls.length
    ? { role: 'assistant', content: completion.text || null, toolCalls: completion.toolCalls, step }
    : { role: 'assistant', content: completion.text, step };
  await ds.transaction(async (em) => {
    if (!(await appendTranscript(em, run.run_id, turn))) return;
    const usage: ModelUsage = {
      input_tokens: (run.usage?.input_tokens ?? 0) + completion.usage.input_tokens,
      output_tokens: (run.usage?.output_tokens ?? 0) + completion.usage.output_tokens,
    };
    const output = completion.toolCalls.length
      ? {}
      : { output: textArtifact(completion.text, griptapeId()), output_timestamp: now() };
    // Not status changes: data the run reports about itself (usage, the model that answered, the answer).
    await em
      .createQueryBuilder()
      .update(Run)
      .set({ usage, model: completion.model, updated_at: new Date(), ...output } as object)
      .where({ run_id: run.run_id })
      .execute();
  });
  return stepResultOf(turn, definitions);
}

/** The text a finished child run gives back to the model. */
function childResult(child: Run | null): string {
  if (!child) return 'Error: the run no longer exists';
  if (child.status === 'SUCCEEDED') {
    return child.output != null ? resultText(child.output) : 'The run succeeded without output';
  }
  const detail = (child.status_detail ?? {}) as { message?: string | null; error?: string };
  return `Error: the run ended ${child.status}: ${detail.error ?? detail.message ?? 'no detail'}`;
}

/** The result of one function call (a child run, or why there was none) joins the transcript. Idempotent. */
export async function recordToolCallResult(
  ds: DataSource,
  input: { runId: string; step: number; toolCallId: string; childRunId: string; error?: string },
): Promise<void> {
  const child = input.error ? null : await ds.getRepository(Run).findOneBy({ run_id: input.childRunId });
  const content = input.error ? `Error: ${input.error}` : childResult(child);
  await ds.transaction(async (em) => {
    const added = await appendTranscript(em, input.runId, {
      role: 'tool',
      toolCallId: input.toolCallId,
      content,
      step: input.step,
    });
    if (!added) return;
    await appendEvents(em, input.runId, [
      {
        type: 'AssistantToolCallCompleted',
        origin: 'SYSTEM',
        payload: {
          tool_call_id: input.toolCallId,
          ...(child ? { run_id: child.run_id, status: child.status } : {}),
          ...(input.error || child?.status !== 'SUCCEEDED' ? { error: content } : {}),
        },
      },
    ]);
  });
}

/**
 * The terminal write. SUCCEEDED adds the assistant's FinishStructureRunEvent (its `output_task_output`
 * is the answer, as clients read it) and appends the exchange to the run's thread, in the same transaction.
 */
export async function finishAssistantRun(
  ds: DataSource,
  runId: string,
  ending: RunEnding,
): Promise<RunStatus | 'MISSING'> {
  const status = await finishRun(ds, runId, ending, {
    alsoWhenMoved: async (em, run) => {
      if (run.status !== 'SUCCEEDED') return;
      const details = await em.getRepository(AssistantRun).findOneByOrFail({ run_id: run.run_id });
      const userMessage = userMessageOfRun(run);
      await appendEvents(em, run.run_id, [finishEvent(run, userMessage)]);
      if (details.thread_id) {
        // As griptape's conversation memory writes an exchange, so that its driver can load this thread too.
        await appendThreadMessage(em, run.organization_id, details.thread_id, {
          input: textArtifactJson(userMessage),
          output: textArtifactJson(resultText(run.output)),
          metadata: { assistant_run_id: run.run_id },
          createdBy: run.created_by,
        });
      }
    },
  });
  return status ?? 'MISSING';
}

/**
 * Attempt `attempt` ended with `ending`, which the run's retry policy retries: back to QUEUED as the next attempt
 * (markRetrying), its conversation cleared in the same transaction, so the next attempt asks the model afresh and
 * describes the tools again (the earlier attempt's events stay in the run's stream).
 */
export const markAssistantRetrying = (ds: DataSource, input: RunRetryInput) =>
  markRetrying(ds, input, (em) =>
    em.query(`UPDATE assistant_runs SET transcript = '[]', tool_definitions = NULL WHERE run_id = $1`, [input.runId]),
  );

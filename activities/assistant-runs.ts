// Activities of the assistant run workflow. Model tokens, events, the transcript and the output are written
// to PostgreSQL here; only small facts (ids, step results) travel through workflow history.
import { ApplicationFailure } from '@temporalio/activity';
import type { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { ActivityDeps } from './deps';
import type { CompletionDelta } from '../src/drivers/model/types';
import { AssistantRun, AssistantToolDefinition, TranscriptEntry } from '../src/persistence/entities/assistant';
import { CodeResource } from '../src/persistence/entities/code-resource';
import { ModelUsage, Run, RunStatus } from '../src/persistence/entities/run';
import { iso } from '../src/persistence/scoped';
import {
  assistantToolDefinitions,
  DescribedTool,
  offeredTools,
  promptTurns,
  resultText,
  textArtifact,
  userMessageOf,
} from '../src/services/assistants/prompt';
import { latestSuccessfulDeployment } from '../src/services/code/deployments';
import { queuedCodeRun } from '../src/services/code/runs/structure-runs';
import { finishRun, isTerminal, markStarting, RunEnding } from '../src/services/code/runs/lifecycle';
import { appendEvents, NewEvent, transitionRun } from '../src/services/code/runs/state';
import { rulesetInstructions } from '../src/services/assistants/rulesets';
import { appendThreadMessage, threadExchanges } from '../src/services/conversations/threads';
import type { ResourceKind } from '../src/temporal/workflow-start';
import { callModel } from './model-call';
import { retrievalSources } from './assistant-retrieval';
import { griptapeId } from '../src/ids';

/** A child run the workflow starts (its row is inserted), or why it cannot. */
export interface ChildRun {
  childRunId: string;
  workflowKind: ResourceKind;
  organizationId: string;
  summary: string;
}
/** `retrieval`: the call is a knowledge base or retriever function, run by runAssistantRetrieval (no child run). */
export type ChildRunPlan = ChildRun | { error: string } | { retrieval: true };

export type ChildRunPurpose = { describe: string } | { toolCall: { step: number; toolCallId: string } };

export type ModelStepResult = { kind: 'answer' } | { kind: 'tool-calls'; toolCallIds: string[] };

/** griptape event ids are uuid hex strings. */
const now = () => Date.now() / 1000;

interface LoadedRun {
  run: Run;
  details: AssistantRun;
}

export async function loadRun(ds: DataSource | EntityManager, runId: string): Promise<LoadedRun | undefined> {
  const run = await ds.getRepository(Run).findOneBy({ run_id: runId, kind: 'assistant' });
  const details = await ds.getRepository(AssistantRun).findOneBy({ run_id: runId });
  return run && details ? { run, details } : undefined;
}

const userMessageOfRun = (run: Run) => userMessageOf(typeof run.input === 'string' ? run.input : null, run.args);

/** The newest successful `{describe: true}` run of the tool's current deployment: descriptions are cached per deployment. */
async function cachedDescription(ds: DataSource, tool: CodeResource): Promise<DescribedTool | undefined> {
  const deployment = await latestSuccessfulDeployment(ds, tool.resource_id);
  if (!deployment) return undefined;
  const [row]: Array<{ output: { name?: string; activities?: DescribedTool['activities'] } }> = await ds.query(
    `SELECT output FROM runs WHERE resource_id = $1 AND deployment_id = $2 AND kind = 'tool' AND status = 'SUCCEEDED'
       AND input = '{"describe": true}'::jsonb ORDER BY completed_at DESC LIMIT 1`,
    [tool.resource_id, deployment.deployment_id],
  );
  if (!row?.output?.activities) return undefined;
  return { toolId: tool.resource_id, name: row.output.name ?? tool.name, activities: row.output.activities };
}

function chunkEvent(delta: CompletionDelta): NewEvent {
  const payload =
    delta.kind === 'text'
      ? { type: 'TextChunkEvent', id: griptapeId(), timestamp: now(), meta: {}, index: 0, token: delta.text }
      : {
          type: 'ActionChunkEvent',
          id: griptapeId(),
          timestamp: now(),
          meta: {},
          index: delta.index,
          partial_input: delta.argumentsPart,
          tag: delta.id ?? null,
          name: delta.name ?? null,
          path: null,
        };
  return { type: payload.type, origin: 'ASSISTANT', payload };
}

/** Adds an entry to the transcript unless one for the same step and role (and tool call) is there already. */
export async function appendTranscript(em: EntityManager, runId: string, entry: TranscriptEntry): Promise<boolean> {
  const [row]: Array<{ transcript: TranscriptEntry[] }> = await em.query(
    `SELECT transcript FROM assistant_runs WHERE run_id = $1 FOR UPDATE`,
    [runId],
  );
  const exists = row.transcript.some(
    (t) =>
      t.step === entry.step &&
      t.role === entry.role &&
      (entry.role !== 'tool' || (t.role === 'tool' && t.toolCallId === entry.toolCallId)),
  );
  if (exists) return false;
  await em.query(`UPDATE assistant_runs SET transcript = transcript || $2::jsonb WHERE run_id = $1`, [
    runId,
    JSON.stringify([entry]),
  ]);
  return true;
}

export function createAssistantRunActivities(deps: ActivityDeps) {
  const { ds, log } = deps;

  /** The text a finished child run gives back to the model. */
  function childResult(child: Run | null): string {
    if (!child) return 'Error: the run no longer exists';
    if (child.status === 'SUCCEEDED') {
      return child.output != null ? resultText(child.output) : 'The run succeeded without output';
    }
    const detail = (child.status_detail ?? {}) as { message?: string | null; error?: string };
    return `Error: the run ended ${child.status}: ${detail.error ?? detail.message ?? 'no detail'}`;
  }

  return {
    /** QUEUED → STARTING; which tools still need describing. Undefined when the run is gone or ended. */
    async startAssistantRun(input: { runId: string }): Promise<{ toolsToDescribe: string[] } | undefined> {
      const status = await markStarting(ds, input.runId);
      if (status === undefined || isTerminal(status)) return undefined;
      const loaded = await loadRun(ds, input.runId);
      if (!loaded) return undefined;
      const toolsToDescribe: string[] = [];
      for (const toolId of loaded.details.tool_ids) {
        const tool = await ds.getRepository(CodeResource).findOneBy({ resource_id: toolId, kind: 'tool' });
        if (tool && !(await cachedDescription(ds, tool))) toolsToDescribe.push(toolId);
      }
      return { toolsToDescribe };
    },

    /**
     * Inserts the row of a child run (idempotent: the id comes from the workflow) — a tool's describe run,
     * or the structure or tool run of a function call the model made — or says why there is none.
     */
    async planChildRun(input: { runId: string; childRunId: string; purpose: ChildRunPurpose }): Promise<ChildRunPlan> {
      const loaded = await loadRun(ds, input.runId);
      if (!loaded) return { error: 'The assistant run no longer exists' };
      const { run, details } = loaded;
      let target: Extract<AssistantToolDefinition['target'], { kind: 'structure' | 'tool' }>;
      let args: string[] = [];
      let childInput: unknown = null;
      let call: { id: string; name: string } | undefined;
      if ('describe' in input.purpose) {
        target = { kind: 'tool', id: input.purpose.describe, activity: '' };
        childInput = { describe: true };
      } else {
        const { step, toolCallId } = input.purpose.toolCall;
        const turn = details.transcript.find((t) => t.step === step && t.role === 'assistant');
        const toolCall = turn?.role === 'assistant' ? turn.toolCalls?.find((c) => c.id === toolCallId) : undefined;
        if (!toolCall) return { error: `Unknown function call ${toolCallId}` };
        call = toolCall;
        const definition = details.tool_definitions?.find((d) => d.name === toolCall.name);
        if (!definition) return { error: `There is no function named "${toolCall.name}"` };
        let parsed: unknown;
        try {
          parsed = toolCall.arguments.trim() === '' ? {} : JSON.parse(toolCall.arguments);
        } catch {
          return { error: `The arguments of ${toolCall.name} are not valid JSON: ${toolCall.arguments.slice(0, 200)}` };
        }
        if (definition.target.kind === 'knowledge_base' || definition.target.kind === 'retriever')
          return { retrieval: true };
        target = definition.target;
        if (target.kind === 'structure') {
          const given = (parsed as { args?: unknown } | null)?.args ?? [];
          if (!Array.isArray(given) || !given.every((a) => typeof a === 'string'))
            return { error: '`args` must be an array of strings' };
          args = given;
        } else {
          childInput = { activity: target.activity, params: parsed ?? {} };
        }
      }
      const resource = await ds
        .getRepository(CodeResource)
        .findOneBy({ resource_id: target.id, organization_id: run.organization_id });
      if (!resource) return { error: `The ${target.kind} ${target.id} no longer exists` };
      const row = await queuedCodeRun(ds, resource, {
        runId: input.childRunId,
        organizationId: run.organization_id,
        createdBy: run.created_by,
        args,
        envVars: [],
        input: childInput,
      });
      if (!row) return { error: `The ${resource.kind} "${resource.name}" has no successful deployment` };
      await ds.transaction(async (em) => {
        const inserted = await em
          .createQueryBuilder()
          .insert()
          .into(Run)
          .values(row as QueryDeepPartialEntity<Run>)
          .orIgnore()
          .execute();
        if (call && inserted.identifiers.length) {
          await appendEvents(em, run.run_id, [
            {
              type: 'AssistantToolCallStarted',
              origin: 'SYSTEM',
              payload: {
                tool_call_id: call.id,
                name: call.name,
                kind: resource.kind,
                [`${resource.kind}_id`]: resource.resource_id,
                run_id: input.childRunId,
              },
            },
          ]);
        }
      });
      return {
        childRunId: input.childRunId,
        workflowKind: `${resource.kind}-run` as ResourceKind,
        organizationId: run.organization_id,
        summary: `${call ? `Call ${call.name}` : `Describe tool ${resource.name}`} for assistant run ${run.run_id}`,
      };
    },

    /**
     * The functions offered to the model (stored on the run), then → RUNNING with the assistant's
     * StartStructureRunEvent. An ending when a tool could not be described.
     */
    async resolveAssistantTools(input: {
      runId: string;
      failures: Array<{ toolId: string; error: string }>;
    }): Promise<RunEnding | undefined> {
      const loaded = await loadRun(ds, input.runId);
      if (!loaded) return { status: 'ERROR', reason: 'AlreadyEnded', error: 'The run no longer exists' };
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
          const failure = input.failures.find((f) => f.toolId === toolId)?.error;
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
      const definitions = assistantToolDefinitions(structures, described, sources);
      await ds.transaction(async (em) => {
        await em.query(`UPDATE assistant_runs SET tool_definitions = $2::jsonb WHERE run_id = $1`, [
          run.run_id,
          JSON.stringify(definitions),
        ]);
        const startedAt = new Date();
        const moved = await transitionRun(em, run.run_id, 'RUNNING', { started_at: startedAt });
        if (!moved) return;
        await appendEvents(em, run.run_id, [
          { type: 'StructureRunRunning', origin: 'SYSTEM', payload: { status: 'RUNNING', started_at: iso(startedAt) } },
          {
            type: 'StartStructureRunEvent',
            origin: 'ASSISTANT',
            payload: {
              type: 'StartStructureRunEvent',
              id: griptapeId(),
              timestamp: now(),
              meta: {},
              structure_id: run.assistant_id,
              input_task_input: textArtifact(userMessageOfRun(run), griptapeId()),
              input_task_output: null,
            },
          },
        ]);
      });
      return undefined;
    },

    /**
     * One model call: the prompt (rulesets, thread, user message, this run's turns so far) and the offered
     * functions; streamed tokens become TextChunkEvent / ActionChunkEvent events. The answer's turn joins
     * the transcript; a final answer becomes the run's output. Idempotent per step. Heartbeats throughout,
     * so a cancel aborts the provider request at once.
     */
    async assistantModelStep(input: { runId: string; step: number }): Promise<ModelStepResult> {
      const loaded = await loadRun(ds, input.runId);
      if (!loaded || isTerminal(loaded.run.status))
        throw ApplicationFailure.nonRetryable('The run already ended', 'AlreadyEnded');
      const { run, details } = loaded;
      const resultOf = (turn: TranscriptEntry): ModelStepResult =>
        turn.role === 'assistant' && turn.toolCalls?.length
          ? { kind: 'tool-calls', toolCallIds: turn.toolCalls.map((c) => c.id) }
          : { kind: 'answer' };
      const recorded = details.transcript.find((t) => t.step === input.step && t.role === 'assistant');
      if (recorded) return resultOf(recorded);

      const turns = promptTurns({
        rulesets: await rulesetInstructions(ds, run.organization_id, details.ruleset_ids),
        history: details.thread_id ? await threadExchanges(ds, details.thread_id) : [],
        userMessage: userMessageOfRun(run),
        transcript: details.transcript,
      });
      const completion = await callModel(
        deps,
        run.run_id,
        {
          model: run.model ?? undefined,
          turns,
          tools: offeredTools(details.tool_definitions ?? []),
          stream: details.stream,
        },
        (delta) => [chunkEvent(delta)],
      );
      const turn: TranscriptEntry = completion.toolCalls.length
        ? { role: 'assistant', content: completion.text || null, toolCalls: completion.toolCalls, step: input.step }
        : { role: 'assistant', content: completion.text, step: input.step };
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
      return resultOf(turn);
    },

    /** The result of one function call (a child run, or why there was none) joins the transcript. Idempotent. */
    async recordToolCallResult(input: {
      runId: string;
      step: number;
      toolCallId: string;
      childRunId: string;
      error?: string;
    }): Promise<void> {
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
    },

    /**
     * The terminal write. SUCCEEDED adds the assistant's FinishStructureRunEvent (its `output_task_output`
     * is the answer, as clients read it) and appends the exchange to the run's thread, in the same transaction.
     */
    async finishAssistantRun(input: { runId: string; ending: RunEnding }): Promise<RunStatus | 'MISSING'> {
      const status = await finishRun(ds, input.runId, input.ending, async (em, run) => {
        if (run.status !== 'SUCCEEDED') return;
        const details = await em.getRepository(AssistantRun).findOneByOrFail({ run_id: run.run_id });
        const userMessage = userMessageOfRun(run);
        await appendEvents(em, run.run_id, [
          {
            type: 'FinishStructureRunEvent',
            origin: 'ASSISTANT',
            payload: {
              type: 'FinishStructureRunEvent',
              id: griptapeId(),
              timestamp: now(),
              meta: {},
              structure_id: run.assistant_id,
              output_task_input: textArtifact(userMessage, griptapeId()),
              output_task_output: run.output,
            },
          },
        ]);
        if (details.thread_id) {
          await appendThreadMessage(em, run.organization_id, details.thread_id, {
            input: userMessage,
            output: resultText(run.output),
            metadata: { assistant_run_id: run.run_id },
            createdBy: run.created_by,
          });
        }
      });
      return status ?? 'MISSING';
    },
  };
}

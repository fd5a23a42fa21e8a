// The retrieval functions of assistant runs: each of the run's knowledge bases and retrievers is offered to
// the model as a function taking `{query, count?}` (./prompt.ts); a call is answered in the worker without a
// child run: the passages (numbered, with their source) go back to the model, and the run's events show the
// call (AssistantToolCallStarted, with the query) and what it retrieved (AssistantToolCallCompleted, with the
// entries). A failed retrieval is an error the model reads, not the run's end.
import { In, type DataSource } from 'typeorm';
import type { ModelDriver } from '../../drivers/model/types';
import type { AssistantRun } from '../../persistence/entities/assistant';
import { KnowledgeBase, type QueryEntry } from '../../persistence/entities/knowledge-base';
import { Retriever } from '../../persistence/entities/retrieval';
import { entryText, passages, queryRetriever, retrieve, type RetrievalStores } from '../knowledge/retrieval/retrieve';
import { appendEvents } from '../code/runs/state';
import { DEFAULT_RETRIEVAL_COUNT, MAX_RETRIEVAL_COUNT, type RetrievalSource } from './prompt';
import { appendTranscript, loadAssistantRun, toolCallOf } from './transcript';

/** The run's knowledge bases and retrievers that still exist, in the order of its lists. */
export async function retrievalSources(
  ds: DataSource,
  organizationId: string,
  details: Pick<AssistantRun, 'knowledge_base_ids' | 'retriever_ids'>,
): Promise<RetrievalSource[]> {
  const kbs = details.knowledge_base_ids.length
    ? await ds.getRepository(KnowledgeBase).findBy({
        knowledge_base_id: In(details.knowledge_base_ids),
        organization_id: organizationId,
      })
    : [];
  const retrievers = details.retriever_ids.length
    ? await ds
        .getRepository(Retriever)
        .findBy({ retriever_id: In(details.retriever_ids), organization_id: organizationId })
    : [];
  return [
    ...details.knowledge_base_ids.flatMap((id) => {
      const kb = kbs.find((k) => k.knowledge_base_id === id);
      return kb ? [{ kind: 'knowledge_base' as const, id, name: kb.name, description: kb.description }] : [];
    }),
    ...details.retriever_ids.flatMap((id) => {
      const r = retrievers.find((x) => x.retriever_id === id);
      return r ? [{ kind: 'retriever' as const, id, name: r.name, description: r.description }] : [];
    }),
  ];
}

/** What the events show of an entry: enough to see where the answer came from. */
const shown = (e: QueryEntry & { knowledge_base_id?: string }) => ({
  id: e.id,
  score: e.score,
  namespace: e.namespace,
  content: entryText(e),
  ...(e.knowledge_base_id ? { knowledge_base_id: e.knowledge_base_id } : {}),
});

/**
 * Answers one retrieval function call of step `step`: transcript entry and events, once (idempotent).
 * `signal` aborts the provider's embedding (or reranking) call; an aborted call throws instead of answering.
 */
export async function answerRetrievalCall(
  stores: RetrievalStores,
  models: ModelDriver,
  input: { runId: string; step: number; toolCallId: string },
  signal: AbortSignal,
): Promise<void> {
  const { ds } = stores;
  const loaded = await loadAssistantRun(ds, input.runId);
  if (!loaded) return;
  const { run, details } = loaded;
  const call = toolCallOf(details, input.step, input.toolCallId);
  const target = details.tool_definitions?.find((d) => d.name === call?.name)?.target;
  if (!call || !target || (target.kind !== 'knowledge_base' && target.kind !== 'retriever')) return;
  const idKey = `${target.kind}_id`;

  let content: string;
  let entries: Array<ReturnType<typeof shown>> = [];
  let query: string | undefined;
  try {
    const args = JSON.parse(call.arguments.trim() || '{}') as { query?: unknown; count?: unknown };
    if (typeof args.query !== 'string' || !args.query.trim()) throw new Error('`query` must be a non-empty string');
    query = args.query;
    const count =
      Number.isInteger(args.count) && (args.count as number) >= 1
        ? Math.min(args.count as number, MAX_RETRIEVAL_COUNT)
        : DEFAULT_RETRIEVAL_COUNT;
    let found: Array<QueryEntry & { knowledge_base_id?: string }>;
    if (target.kind === 'knowledge_base') {
      const kb = await ds
        .getRepository(KnowledgeBase)
        .findOneBy({ knowledge_base_id: target.id, organization_id: run.organization_id });
      if (!kb) throw new Error(`The knowledge base ${target.id} no longer exists`);
      found = await retrieve(stores, models, kb, query, { count }, signal);
    } else {
      const retriever = await ds
        .getRepository(Retriever)
        .findOneBy({ retriever_id: target.id, organization_id: run.organization_id });
      if (!retriever) throw new Error(`The retriever ${target.id} no longer exists`);
      found = (await queryRetriever(stores, models, retriever, query, {}, signal)).slice(0, count);
    }
    entries = found.map(shown);
    content = found.length ? passages(found) : 'No passage matches the query.';
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    content = `Error: ${(err as Error).message}`;
  }

  await ds.transaction(async (em) => {
    const added = await appendTranscript(em, run.run_id, {
      role: 'tool',
      toolCallId: call.id,
      content,
      step: input.step,
    });
    if (!added) return;
    await appendEvents(em, run.run_id, [
      {
        type: 'AssistantToolCallStarted',
        origin: 'SYSTEM',
        payload: { tool_call_id: call.id, name: call.name, kind: target.kind, [idKey]: target.id, query },
      },
      {
        type: 'AssistantToolCallCompleted',
        origin: 'SYSTEM',
        payload: {
          tool_call_id: call.id,
          kind: target.kind,
          [idKey]: target.id,
          entries,
          ...(content.startsWith('Error: ') ? { error: content } : {}),
        },
      },
    ]);
  });
}

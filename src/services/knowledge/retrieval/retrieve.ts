// Retrieval as the worker does it, shared by queries, searches, retrievers and assistant runs: embed the query
// (when the knowledge base has a model), rank its chunks (query.ts), and, for searches, have the model answer
// from the chunks it is given, citing them as [1], [2], ...; for retrievers, fuse the components' rankings by
// reciprocal rank fusion and optionally let the model rerank them. Model failures surface as ModelError.
import { queryTextFor } from '../../../config/local-embeddings';
import type { ChatTurn, ModelDriver } from '../../../drivers/model/types';
import { KnowledgeBase, QueryEntry } from '../../../persistence/entities/knowledge-base';
import type {
  KnowledgeBaseComponentConfig,
  RerankComponentConfig,
  Retriever,
  RetrieverOutput,
} from '../../../persistence/entities/retrieval';
import type { KnowledgeBaseQueryArgs } from '../../../temporal/contracts';
import { DEFAULT_QUERY_COUNT, RRF_K, rankEntries, retrievalOf } from './query';
import { openChunkStore, type ChunkStores } from '../index/chunk-store';
import { componentsOfRetriever } from './retriever-components';

/** Where chunks are read: our database, or a pg_vector knowledge base's outside one (its password sealed). */
export type RetrievalStores = ChunkStores;

/** A retriever component or an assistant names a knowledge base deleted since (the message names it). */
export class KnowledgeBaseGoneError extends Error {
  readonly type = 'KnowledgeBaseGone';
}

export const goneMessage = (knowledgeBaseId: string, componentName?: string) =>
  `The knowledge base ${knowledgeBaseId}${componentName ? ` of component "${componentName}"` : ''} no longer exists`;

/** The ranked entries of `query` in `kb`; OutsideDatabaseError when a pg_vector knowledge base's database fails. */
export async function retrieve(
  stores: RetrievalStores,
  models: ModelDriver,
  kb: KnowledgeBase,
  query: string,
  args: KnowledgeBaseQueryArgs,
  signal?: AbortSignal,
): Promise<QueryEntry[]> {
  let vector: number[] | undefined;
  if (retrievalOf(kb) !== 'full_text' && kb.embedding_dimensions) {
    const model = kb.embedding_model!;
    vector = (await models.embed({ model, input: [queryTextFor(model, query)], signal })).vectors[0];
  }
  const store = await openChunkStore(stores, kb);
  try {
    return await rankEntries(store, kb, query, args, vector);
  } finally {
    await store.close();
  }
}

/** The text of an entry (query.ts puts the chunk's text in `meta.content`). */
export const entryText = (e: QueryEntry) => e.meta.content ?? '';

/** Passages as the model reads them: `[n] (asset path)` then the text. */
export const passages = (entries: QueryEntry[]) =>
  entries.map((e, i) => `[${i + 1}] (${e.namespace})\n${entryText(e)}`).join('\n\n');

export const NO_MATCH_ANSWER = 'No passage of the knowledge base matches the query.';

/** The prompt of a search: answer only from the passages, citing them. */
export function searchTurns(query: string, entries: QueryEntry[]): ChatTurn[] {
  return [
    {
      role: 'system',
      content:
        'Answer the question using only the numbered passages below. Cite the passages you use with their ' +
        'numbers in square brackets, like [1] or [2][3]. If the passages do not contain the answer, say so.',
    },
    { role: 'user', content: `Passages:\n\n${passages(entries)}\n\nQuestion: ${query}` },
  ];
}

/** The model's answer to `query` from `entries` (no model call when nothing matched). */
export async function answerFrom(
  models: ModelDriver,
  query: string,
  entries: QueryEntry[],
  signal?: AbortSignal,
): Promise<{ result: string; model: string | null }> {
  if (!entries.length) return { result: NO_MATCH_ANSWER, model: null };
  const completion = await models.complete({ turns: searchTurns(query, entries), stream: false, signal });
  return { result: completion.text, model: completion.model };
}

/** Per component name: the query args a query of the retriever may give (`retriever_components_query_args`). */
export type ComponentQueryArgs = Record<string, { count?: number; filter?: Record<string, string | number | boolean> }>;

/**
 * A retriever's query: each `knowledge_base` component (inline, then standalone) ranks its knowledge base (its config's query_args,
 * overridden per query by `retriever_components_query_args[<component name>]`), the rankings are fused by
 * reciprocal rank fusion (score = Σ 1 / (60 + rank)), then each `model_rerank` component reorders them.
 * A knowledge base deleted since the retriever was made is a KnowledgeBaseGoneError naming it (the api
 * checks before the query starts; this is the race). Every retrieved entry is kept (each
 * component's count bounds its own share); a model_rerank component's count keeps the first ones.
 */
export async function queryRetriever(
  stores: RetrievalStores,
  models: ModelDriver,
  retriever: Retriever,
  query: string,
  perComponent: ComponentQueryArgs,
  signal?: AbortSignal,
): Promise<RetrieverOutput[]> {
  const rankings: RetrieverOutput[][] = [];
  const components = await componentsOfRetriever(stores.ds, retriever);
  for (const c of components) {
    if (c.type !== 'knowledge_base') continue;
    const config = c.config as KnowledgeBaseComponentConfig;
    const kb = await stores.ds.getRepository(KnowledgeBase).findOneBy({
      knowledge_base_id: config.knowledge_base_id,
      organization_id: retriever.organization_id,
    });
    if (!kb) throw new KnowledgeBaseGoneError(goneMessage(config.knowledge_base_id, c.name));
    const given = { ...config.query_args, ...perComponent[c.name] };
    const args: KnowledgeBaseQueryArgs = {
      count: given.count ?? DEFAULT_QUERY_COUNT,
      ...(given.filter ? { filter: given.filter } : {}),
    };
    const entries = await retrieve(stores, models, kb, query, args, signal);
    rankings.push(
      entries.map((e) => ({
        ...e,
        knowledge_base_id: kb.knowledge_base_id,
        retriever_component_id: c.retriever_component_id,
      })),
    );
  }
  const scores = new Map<string, { output: RetrieverOutput; score: number }>();
  for (const ranking of rankings) {
    ranking.forEach((output, i) => {
      const seen = scores.get(output.id);
      scores.set(output.id, { output: seen?.output ?? output, score: (seen?.score ?? 0) + 1 / (RRF_K + i + 1) });
    });
  }
  let outputs = [...scores.values()]
    .sort((a, b) => b.score - a.score || a.output.id.localeCompare(b.output.id))
    .map(({ output, score }) => ({ ...output, score }));
  for (const c of components) {
    if (c.type === 'model_rerank')
      outputs = await rerank(models, query, outputs, c.config as RerankComponentConfig, signal);
  }
  return outputs;
}

const RERANK_SCHEMA = {
  type: 'object',
  properties: { order: { type: 'array', items: { type: 'integer' } } },
  required: ['order'],
  additionalProperties: false,
};

/**
 * The model orders the passages by relevance (structured output `{order: [passage numbers]}`); passages it
 * leaves out follow in their fused order; `count` keeps the first ones. Scores become 1 / position.
 */
export async function rerank<T extends QueryEntry>(
  models: ModelDriver,
  query: string,
  entries: T[],
  config: RerankComponentConfig,
  signal?: AbortSignal,
): Promise<T[]> {
  if (entries.length < 2) return entries.slice(0, config.count ?? entries.length);
  const completion = await models.complete({
    ...(config.model ? { model: config.model } : {}),
    turns: [
      {
        role: 'system',
        content:
          'Order the numbered passages by how well they answer the question, most relevant first. ' +
          'Answer {"order": [passage numbers]}.',
      },
      { role: 'user', content: `Passages:\n\n${passages(entries)}\n\nQuestion: ${query}` },
    ],
    outputSchema: { name: 'rerank', schema: RERANK_SCHEMA },
    stream: false,
    signal,
  });
  let order: number[] = [];
  try {
    const parsed = JSON.parse(completion.text) as { order?: unknown };
    if (Array.isArray(parsed.order)) order = parsed.order.filter((n): n is number => Number.isInteger(n));
  } catch {
    // An answer that is not the asked JSON keeps the fused order.
  }
  const picked = [...new Set(order.filter((n) => n >= 1 && n <= entries.length))].map((n) => entries[n - 1]);
  const rest = entries.filter((e) => !picked.includes(e));
  return [...picked, ...rest].slice(0, config.count ?? entries.length).map((e, i) => ({ ...e, score: 1 / (i + 1) }));
}

// What a deleted record leaves behind in the records that name it, removed in the delete's own transaction:
// its id in every assistant's id list (`ruleset_ids`, `structure_ids`, `tool_ids`, `knowledge_base_ids`,
// `retriever_ids`) and, for a knowledge base, every retriever's inline component that retrieves from it. So no
// later run of an assistant answers 409 for a record that was deleted under it. A standalone retriever component
// (/retriever-components) that names a deleted knowledge base stays: it is a record of its own, and a query
// through it answers 409 naming the knowledge base and what to do (point it at another one or remove it).
import type { EntityManager } from 'typeorm';

/** The assistant id list that names each kind of record. */
const ASSISTANT_LISTS = {
  ruleset: 'ruleset_ids',
  structure: 'structure_ids',
  tool: 'tool_ids',
  knowledge_base: 'knowledge_base_ids',
  retriever: 'retriever_ids',
} as const;

export type NamedByAssistants = keyof typeof ASSISTANT_LISTS;

/**
 * Removes `id`, a record of kind `what` of `organizationId` that is being deleted, from every assistant (and,
 * for a knowledge base, every retriever) of the organization that names it. Call it inside the transaction
 * that deletes the record.
 */
export async function forgetDeleted(
  em: EntityManager,
  what: NamedByAssistants,
  organizationId: string,
  id: string,
): Promise<void> {
  const list = ASSISTANT_LISTS[what];
  await em.query(
    `UPDATE assistants SET ${list} = ${list} - $1::text, updated_at = now()
      WHERE organization_id = $2 AND ${list} @> jsonb_build_array($1::text)`,
    [id, organizationId],
  );
  if (what !== 'knowledge_base') return;
  await em.query(
    `UPDATE retrievers SET updated_at = now(), components = coalesce(
         (SELECT jsonb_agg(c ORDER BY i) FROM jsonb_array_elements(components) WITH ORDINALITY AS e(c, i)
           WHERE NOT (c->>'type' = 'knowledge_base' AND c->'config'->>'knowledge_base_id' = $1::text)),
         '[]'::jsonb)
      WHERE organization_id = $2
        AND components @> jsonb_build_array(jsonb_build_object(
              'type', 'knowledge_base', 'config', jsonb_build_object('knowledge_base_id', $1::text)))`,
    [id, organizationId],
  );
}

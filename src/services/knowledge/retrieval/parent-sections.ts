// Parent-child retrieval (a knowledge base's `parent_child: true`, as Dify's and RAGFlow's parent-child
// chunking): the chunks are small (CHILD_CHUNK_TOKENS), so a match is precise, and a query answers each matched
// chunk's section instead: the chunks of that section around the match, under the section's heading line, up to
// PARENT_CHARS characters, one entry per section. Sections come from chunkDocument (each chunk's `meta.section`).
import type { KnowledgeBase } from '../../../persistence/entities/knowledge-base';
import type { ChunkStore } from '../index/chunk-store';

/** Tokens of a child chunk: half the usual chunk, so that a match is one idea. */
export const CHILD_CHUNK_TOKENS = 128;
/** Characters of a section answered at most (about 1,000 tokens of English). */
export const PARENT_CHARS = 4000;

export interface MatchedChunk {
  chunk_id: string;
  asset_path: string;
  content: string;
  meta: Record<string, string>;
}

/** A chunk's text without its heading line (chunkDocument starts each with one, then a blank line). */
const bodyOf = (content: string) => content.slice(content.indexOf('\n\n') + 2 || 0);

/**
 * The matched chunks, best first, one per section (the best match of each), each with its section's text as
 * `content`: its neighbours of the same section joined to it, nearest first, while they fit PARENT_CHARS.
 */
export async function withSections<T extends MatchedChunk>(store: ChunkStore, kb: KnowledgeBase, matched: T[]) {
  const seen = new Set<string>();
  const best = matched.filter((m) => {
    const key = `${m.asset_path}\u0000${m.meta.section ?? m.chunk_id}`;
    return !seen.has(key) && seen.add(key);
  });
  const keyed = best.filter((m) => m.meta.section !== undefined);
  if (!keyed.length) return best;
  const rows: Array<{ asset_path: string; section: string; chunk_index: number; content: string }> = await store.query(
    `SELECT c.asset_path, c.meta->>'section' AS section, c.chunk_index, c.content
         FROM ${store.table} c
         JOIN unnest($2::text[], $3::text[]) AS s(asset_path, section)
           ON c.asset_path = s.asset_path AND c.meta->>'section' = s.section
        WHERE c.knowledge_base_id = $1
        ORDER BY c.asset_path, c.chunk_index`,
    [kb.knowledge_base_id, keyed.map((m) => m.asset_path), keyed.map((m) => m.meta.section)],
  );
  const bySection = new Map<string, typeof rows>();
  for (const r of rows) {
    const key = `${r.asset_path}\u0000${r.section}`;
    bySection.set(key, [...(bySection.get(key) ?? []), r]);
  }
  return best.map((m) => {
    const chunks = bySection.get(`${m.asset_path}\u0000${m.meta.section}`);
    const at = chunks?.findIndex((c) => c.chunk_index === Number(m.meta.chunk_index)) ?? -1;
    if (!chunks || at === -1) return m;
    let [from, to] = [at, at + 1];
    let length = chunks[at].content.length;
    for (let grew = true; grew;) {
      grew = false;
      for (const side of [to, from - 1]) {
        const next = chunks[side];
        if (!next || length + next.content.length > PARENT_CHARS) continue;
        length += next.content.length;
        if (side === to) to++;
        else from--;
        grew = true;
      }
    }
    const heading = m.content.slice(0, Math.max(0, m.content.indexOf('\n\n')));
    const bodies = chunks.slice(from, to).map((c) => bodyOf(c.content));
    return { ...m, content: heading ? `${heading}\n\n${bodies.join('\n\n')}` : bodies.join('\n\n') };
  });
}

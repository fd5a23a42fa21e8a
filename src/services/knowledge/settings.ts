// A knowledge base's settings: the member of its config named like its type (`config.gtc_pg_vector`, ...),
// read by the service that stores them, the route that answers them and the jobs and queries they steer.
import type { KnowledgeBase } from '../../persistence/entities/knowledge-base';

/** The settings member of a config: the one named like the type, else its only member. */
export function settingsOf(config: Record<string, Record<string, unknown>> | undefined, type: string | undefined) {
  if (!config) return undefined;
  return (type && config[type]) || Object.values(config)[0];
}

/** Whether the knowledge base answers sections (parent_child: retrieval/parent-sections.ts). */
export const parentChildOf = (kb: Pick<KnowledgeBase, 'config' | 'type'>) =>
  settingsOf(kb.config, kb.type)?.parent_child === true;

/** How its jobs chunk: along the document's structure (the default), or by length only (`chunking: "length"`). */
export const chunkingOf = (kb: Pick<KnowledgeBase, 'config' | 'type'>): 'structure' | 'length' =>
  settingsOf(kb.config, kb.type)?.chunking === 'length' ? 'length' : 'structure';

// What is built on knowledge bases' chunks: persisted searches (a model's answer citing chunks), retrievers
// (several knowledge bases fused, optionally reranked by a model) and their persisted queries.
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { QueryEntry } from './knowledge-base';

@Entity('knowledge_base_searches')
export class KnowledgeBaseSearch {
  @PrimaryColumn('uuid') knowledge_base_search_id: string;
  @Column('uuid') knowledge_base_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') query: string;
  @Column('jsonb') query_args: Record<string, unknown>;
  /** The model's answer; its `[n]` markers cite `entries[n-1]`. */
  @Column('text') result: string;
  /** The retrieved chunks the model was given, in citation order. */
  @Column('jsonb') entries: QueryEntry[];
  /** `provider/model` that answered; null when no chunk matched (no model was asked). */
  @Column('text', { nullable: true }) model: string | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
}

/** A knowledge base to retrieve from (`knowledge_base`) or a reranking step (`model_rerank`): docs/knowledge-bases.md. */
export interface RetrieverComponent {
  retriever_component_id: string;
  name: string;
  description?: string;
  type: 'knowledge_base' | 'model_rerank';
  config: KnowledgeBaseComponentConfig | RerankComponentConfig;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeBaseComponentConfig {
  knowledge_base_id: string;
  query_args?: { count?: number; filter?: Record<string, string | number | boolean> };
}

export interface RerankComponentConfig {
  /** `provider/model`; the default model when absent. */
  model?: string;
  /** How many outputs the reranked list keeps. */
  count?: number;
}

@Entity('retrievers')
export class Retriever {
  @PrimaryColumn('uuid') retriever_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  /** Inline components, read and written with the retriever. */
  @Column('jsonb') components: RetrieverComponent[];
  /** Standalone components (`retriever_components` rows) it names, read as they are when it is queried. */
  @Column('uuid', { array: true }) component_ids: string[];
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** A retriever component as its own resource (/retriever-components), which retrievers name by id. */
@Entity('retriever_components')
export class StandaloneRetrieverComponent {
  @PrimaryColumn('uuid') retriever_component_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') type: RetrieverComponent['type'];
  @Column('jsonb') config: RetrieverComponent['config'];
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** One fused (and maybe reranked) output of a retriever: a knowledge base entry and where it came from. */
export interface RetrieverOutput extends QueryEntry {
  knowledge_base_id: string;
  retriever_component_id: string;
}

@Entity('retriever_queries')
export class RetrieverQuery {
  @PrimaryColumn('uuid') retriever_query_id: string;
  @Column('uuid') retriever_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') query: string;
  @Column('jsonb') query_args: Record<string, unknown>;
  @Column('jsonb') outputs: RetrieverOutput[];
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
}

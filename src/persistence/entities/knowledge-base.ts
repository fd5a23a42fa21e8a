// Knowledge bases, their ingestion jobs and their persisted queries. Chunks (text, tsvector, embedding) are
// read and written with SQL only (src/services/knowledge/index/chunk-store.ts, query.ts): pgvector has no TypeORM type.
import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JobError, JobStatus } from './job-record';

const bigintNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? 0 : Number(v)) };

export type KnowledgeBaseType = 'gtc_pg_vector' | 'gtc_hybrid_sql_pg_vector' | 'pg_vector';

@Entity('knowledge_bases')
export class KnowledgeBase {
  @PrimaryColumn('uuid') knowledge_base_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') type: KnowledgeBaseType;
  /** The request's config object as given (one member named by `type`). */
  @Column('jsonb') config: Record<string, Record<string, unknown>>;
  /** `<bucket_id>/<asset name>`, or `<bucket_id>/<prefix>/` (every asset under the prefix). */
  @Column('jsonb') asset_paths: string[];
  /** `provider/model` chunks are embedded with; null: full text only. */
  @Column('text', { nullable: true }) embedding_model: string | null;
  /** Known after the first job embedded something. */
  @Column('integer', { nullable: true }) embedding_dimensions: number | null;
  /** The text search configuration of its full text (src/services/knowledge/index/full-text.ts). */
  @Column('text') language: string;
  /** A Temporal Schedule starts a job by it (src/temporal/user-schedules.ts). */
  @Column('text', { nullable: true }) schedule_expression: string | null;
  /** Structures each asset's text passes through before chunking (src/services/transforms/apply.ts). */
  @Column('jsonb') transforms: Array<{ structure: { structure_id: string; args?: string[] } }>;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

export type KnowledgeBaseJobStatus = JobStatus;
export type { JobError };

@Entity('knowledge_base_jobs')
export class KnowledgeBaseJob {
  @PrimaryColumn('uuid') knowledge_base_job_id: string;
  @Column('uuid') knowledge_base_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') status: KnowledgeBaseJobStatus;
  @Column('jsonb', { nullable: true }) status_detail: Record<string, unknown> | null;
  @Column('jsonb') errors: JobError[];
  @Column('bigint', { transformer: bigintNumber }) bytes_ingested: number;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
  @Column('timestamptz', { nullable: true }) completed_at: Date | null;
  /** The Idempotency-Key of the request that made it (docs/run-control.md#idempotency-keys). */
  @Column('text', { nullable: true }) idempotency_key?: string | null;
}

export interface QueryEntry {
  id: string;
  score: number;
  meta: Record<string, string>;
  namespace: string;
  vector?: number[];
}

@Entity('knowledge_base_queries')
export class KnowledgeBaseQuery {
  @PrimaryColumn('uuid') knowledge_base_query_id: string;
  @Column('uuid') knowledge_base_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') query: string;
  @Column('jsonb') query_args: Record<string, unknown>;
  @Column('jsonb') entries: QueryEntry[];
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
}

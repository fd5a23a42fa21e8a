import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ChatTurn, ToolDefinition } from '../../drivers/model/types';
import type { RetryPolicy } from '../retry-policy';
import type { Concurrency } from './code-resource';

/** The ids an assistant (and each of its runs) works with. */
export interface AssistantResourceIds {
  knowledge_base_ids: string[];
  retriever_ids: string[];
  ruleset_ids: string[];
  structure_ids: string[];
  tool_ids: string[];
}

export const ASSISTANT_ID_LISTS = [
  'knowledge_base_ids',
  'retriever_ids',
  'ruleset_ids',
  'structure_ids',
  'tool_ids',
] as const;

@Entity('assistants')
export class Assistant implements AssistantResourceIds {
  @PrimaryColumn('uuid') assistant_id: string;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text') description: string;
  @Column('text', { nullable: true }) input: string | null;
  @Column('jsonb') knowledge_base_ids: string[];
  @Column('jsonb') retriever_ids: string[];
  @Column('jsonb') ruleset_ids: string[];
  @Column('jsonb') structure_ids: string[];
  @Column('jsonb') tool_ids: string[];
  /** How many of its runs execute at once (docs/run-control.md#concurrency-keys-and-limits); null: no limit. */
  @Column('jsonb', { nullable: true }) concurrency: Concurrency | null;
  /** Set while its run queue is paused: no run of it starts. */
  @Column('timestamptz', { nullable: true }) queue_paused_at: Date | null;
  /** How its runs lost with their worker are run again (docs/run-control.md#retries-of-lost-runs); null: never. */
  @Column('jsonb', { nullable: true }) retry_policy: RetryPolicy | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/**
 * The assistant-only fields of a run of kind `assistant` (status, input, output, events: `runs`).
 * `transcript` is the model conversation after the prompt (tool-call turns and results), in the
 * provider-neutral shape of src/drivers/model.
 */
@Entity('assistant_runs')
export class AssistantRun implements AssistantResourceIds {
  @PrimaryColumn('uuid') run_id: string;
  @Column('uuid', { nullable: true }) thread_id: string | null;
  @Column('boolean') stream: boolean;
  @Column('jsonb') knowledge_base_ids: string[];
  @Column('jsonb') retriever_ids: string[];
  @Column('jsonb') ruleset_ids: string[];
  @Column('jsonb') structure_ids: string[];
  @Column('jsonb') tool_ids: string[];
  @Column('jsonb') transcript: TranscriptEntry[];
  /** Resolved when the run starts; null before. */
  @Column('jsonb', { nullable: true }) tool_definitions: AssistantToolDefinition[] | null;
}

/** One turn after the prompt, tagged with the model step (1, 2, ...) that produced it. */
export type TranscriptEntry = ChatTurn & { step: number };

/** A function offered to the model, and what calling it runs. */
export interface AssistantToolDefinition extends ToolDefinition {
  target:
    | { kind: 'structure'; id: string }
    /** `approval`: the tool requires it (docs/waitpoints.md); `timeoutSeconds` null: APPROVAL_TIMEOUT_SECONDS. */
    | { kind: 'tool'; id: string; activity: string; approval?: { timeoutSeconds: number | null; notify?: true } }
    /** A retrieval function: the model's `{query, count?}` queried in the worker, no child run. */
    | { kind: 'knowledge_base'; id: string }
    | { kind: 'retriever'; id: string };
}

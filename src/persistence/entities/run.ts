import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { CodeResourceKind, EnvVar } from './code-resource';
import { pendingIdempotencyKey } from '../pending-claim';
import type { RetryPolicy } from '../retry-policy';

export const RUN_STATUSES = ['QUEUED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const RUN_TERMINAL: RunStatus[] = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

/** What runs: user code (structure, function, tool), an assistant, or one chat message exchange. */
export type RunKind = CodeResourceKind | 'assistant' | 'chat';

/** Token usage of a model call, summed over a run's steps. */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
}

/** How one attempt of a run ended (an attempt that was retried). */
/** The limits a run executes under (src/services/code/runs/limits.ts says which apply to which kind). */
export interface RunLimits {
  time_limit_seconds: number;
  sandbox?: 'on' | 'off';
  /** Recorded by the worker: how it isolated the run (root: a uid and control group per run; rootless). */
  isolation?: 'root' | 'rootless' | 'off';
  memory_mb?: number;
  /** Recorded by the worker: what memory_mb bounded (the whole run, or each process's address space). */
  memory_scope?: 'run' | 'process';
  log_bytes?: number;
  result_bytes?: number;
  max_processes?: number;
  cpu_seconds?: number;
  max_open_files?: number;
  max_run_open_files?: number;
  file_mb?: number;
  disk_mb?: number;
  shm_mb?: number;
}

export interface AttemptRecord {
  attempt: number;
  status: RunStatus;
  reason: string | null;
  message: string | null;
  started_at: string | null;
  ended_at: string | null;
}

/** A run of a structure, function, tool or assistant, or a chat message exchange (`kind`). */
@Entity('runs')
export class Run {
  @PrimaryColumn('uuid') run_id: string;
  @Column('text') kind: RunKind;
  @Column('uuid') organization_id: string;
  /** The structure, function or tool; null for assistant runs and chat exchanges. */
  @Column('uuid', { nullable: true }) resource_id: string | null;
  /** The assistant of an assistant run. */
  @Column('uuid', { nullable: true }) assistant_id: string | null;
  @Column('text', { nullable: true }) model: string | null;
  @Column('jsonb', { nullable: true }) usage: ModelUsage | null;
  @Column('uuid', { nullable: true }) deployment_id: string | null;
  @Column('text') status: RunStatus;
  @Column('jsonb', { nullable: true }) status_detail: unknown;
  @Column('jsonb') args: string[];
  @Column('jsonb') env_vars: EnvVar[];
  @Column('jsonb', { nullable: true }) input: unknown;
  @Column('jsonb', { nullable: true }) output: unknown;
  @Column('double precision', { nullable: true }) output_timestamp: number | null;
  @Column('timestamptz', { nullable: true }) started_at: Date | null;
  @Column('timestamptz', { nullable: true }) completed_at: Date | null;
  @Column('text') created_by: string;
  /** The finished run this one replays (POST /{kind}-runs/{id}/replay); null for every other run. */
  @Column('uuid', { nullable: true }) replayed_from_run_id: string | null;
  /** The Idempotency-Key of the request that made it (docs/run-control.md#idempotency-keys). */
  @Column('text', { nullable: true }) idempotency_key?: string | null;
  /** The concurrency key the run was created with (docs/run-control.md#concurrency-keys-and-limits). */
  @Column('text', { nullable: true }) concurrency_key: string | null;
  /** The retry policy the run runs under (its request's, else its resource's); null: one attempt. */
  @Column('jsonb', { nullable: true }) retry_policy: RetryPolicy | null;
  /** The attempt running (or the last one), from 1. */
  @Column('integer') attempt: number;
  /** How each earlier attempt ended (the last one's ending is the run's own). */
  @Column('jsonb') attempts: AttemptRecord[];
  /** The limits its worker enforced, written with RUNNING (the latest attempt's); null before, and for older runs. */
  @Column('jsonb', { nullable: true }) limits: RunLimits | null;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

/** A new QUEUED run row: what every kind of run starts as; `fields` says what kind, whose and with what. */
export function newRunRow(
  fields: Pick<Run, 'run_id' | 'kind' | 'organization_id' | 'created_by'> &
    Partial<
      Pick<
        Run,
        | 'resource_id'
        | 'assistant_id'
        | 'deployment_id'
        | 'model'
        | 'args'
        | 'env_vars'
        | 'input'
        | 'replayed_from_run_id'
        | 'concurrency_key'
        | 'retry_policy'
      >
    >,
  now = new Date(),
): Run {
  return {
    resource_id: null,
    assistant_id: null,
    deployment_id: null,
    model: null,
    args: [],
    env_vars: [],
    input: null,
    replayed_from_run_id: null,
    // Built inside createIdempotently: the request's key.
    idempotency_key: pendingIdempotencyKey(),
    concurrency_key: null,
    retry_policy: null,
    ...fields,
    attempt: 1,
    attempts: [],
    usage: null,
    limits: null,
    status: 'QUEUED',
    status_detail: null,
    output: null,
    output_timestamp: null,
    started_at: null,
    completed_at: null,
    created_at: now,
    updated_at: now,
  };
}

@Entity('run_events')
export class RunEvent {
  @PrimaryColumn('uuid') event_id: string;
  @Column('uuid') run_id: string;
  @Column('bigint', { transformer: { to: (v) => v, from: (v) => Number(v) } }) seq: number;
  @Column('uuid') organization_id: string;
  @Column('text') type: string;
  @Column('text') origin: string;
  @Column('jsonb', { nullable: true }) payload: unknown;
  @Column('double precision') timestamp: number;
  @Column('timestamptz') created_at: Date;
}

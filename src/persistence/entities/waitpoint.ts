import { Column, Entity, PrimaryColumn } from 'typeorm';

export const WAITPOINT_STATUSES = ['WAITING', 'COMPLETED', 'TIMED_OUT', 'CANCELLED'] as const;
export type WaitpointStatus = (typeof WAITPOINT_STATUSES)[number];
export const WAITPOINT_TERMINAL: readonly WaitpointStatus[] = ['COMPLETED', 'TIMED_OUT', 'CANCELLED'];

/** What a tool approval waits on: the model's call of a tool that requires approval. */
export interface ToolApprovalSubject {
  tool_id: string;
  tool_name: string;
  activity: string;
  /** The function the model called (`<tool name>_<activity>`) and its call's id. */
  function_name: string;
  tool_call_id: string;
  step: number;
  /** The arguments the model gave (an approver may replace them). */
  arguments: unknown;
}

/** What a token waits on: whatever its run's code said it is for. */
export interface TokenSubject {
  description?: string;
}

/** How a waitpoint was completed (or, for TIMED_OUT and CANCELLED, why it was not). */
export interface WaitpointCompletion {
  approved: boolean;
  /** A token's: what its run's code gets back. */
  output?: unknown;
  /** The arguments the approved call runs with instead of the model's. */
  arguments?: Record<string, unknown>;
  reason?: string;
}

/** A durable wait of a run that a person (or an outside system, by its callback URL) completes (docs/waitpoints.md). */
@Entity('waitpoints')
export class Waitpoint {
  @PrimaryColumn('uuid') waitpoint_id: string;
  @Column('uuid') organization_id: string;
  @Column('uuid') run_id: string;
  /** `tool_approval`: an assistant's call of a tool; `token`: made by its run's own code. */
  @Column('text') kind: 'tool_approval' | 'token';
  @Column('text') status: WaitpointStatus;
  @Column('jsonb') subject: ToolApprovalSubject | TokenSubject;
  /** A token's: its run makes one waitpoint per key. */
  @Column('text', { nullable: true }) idempotency_key: string | null;
  @Column('integer') timeout_seconds: number;
  @Column('timestamptz') expires_at: Date;
  @Column('jsonb', { nullable: true }) completion: WaitpointCompletion | null;
  @Column('text', { nullable: true }) completed_by: string | null;
  @Column('timestamptz', { nullable: true }) completed_at: Date | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RetryPolicy } from '../retry-policy';

export type CodeResourceKind = 'structure' | 'function' | 'tool';

/** A remote MCP server whose tools a tool of `mcp` code offers (docs/mcp.md#mcp-servers-as-tools). */
export interface McpServerLocation {
  url: string;
  /** Sent with every request; a `secret_ref` value names a secret of the organization. */
  headers: EnvVar[];
}

/** `code` of a structure, function or tool: exactly one member (`mcp`: tools only). */
export type CodeLocation =
  | { default: Record<string, never> }
  | { mcp: McpServerLocation }
  | { data_lake: { bucket_id: string; asset_path: string } }
  | {
      codehost: {
        owner: string;
        name: string;
        push: { branch: string; tag?: string };
        commit_sha?: string;
        /** A connection of the organization whose token clones the (private) repository. */
        connection_id?: string;
      };
    };

export interface EnvVar {
  name: string;
  value: string;
  source?: 'manual' | 'secret_ref';
}

/** How many runs of a resource execute at once (docs/run-control.md#concurrency-keys-and-limits). */
export interface Concurrency {
  /** Runs per concurrency key that may be STARTING or RUNNING at once. */
  limit: number;
  /** The key of runs created without a `concurrency_key` (default "": they share one key). */
  key?: string;
  strategy: 'queue' | 'cancel_in_progress' | 'skip';
  /** Runs of the resource, all keys together, that may be STARTING or RUNNING at once. */
  total_limit?: number;
}

/** Where a tool's calls waiting for approval are posted: the URL, and the secret whose value signs each post. */
export interface ApprovalWebhook {
  url: string;
  secret_id: string;
}

/** A structure, function or tool: user code deployed from a code location. */
@Entity('code_resources')
export class CodeResource {
  @PrimaryColumn('uuid') resource_id: string;
  @Column('text') kind: CodeResourceKind;
  @Column('uuid') organization_id: string;
  @Column('text') name: string;
  @Column('text') description: string;
  @Column('jsonb') code: CodeLocation;
  /** structure_config_file / function_config_file / tool_config_file. */
  @Column('text', { nullable: true }) config_file: string | null;
  @Column('jsonb') env_vars: EnvVar[];
  @Column('boolean') webhook_enabled: boolean;
  @Column('uuid', { nullable: true }) latest_deployment_id: string | null;
  @Column('jsonb', { nullable: true }) concurrency: Concurrency | null;
  /** Set while the resource's queue is paused: no run of it starts. */
  @Column('timestamptz', { nullable: true }) queue_paused_at: Date | null;
  /** How its runs are retried when lost (docs/run-control.md#retries-of-lost-runs); null: never. */
  @Column('jsonb', { nullable: true }) retry_policy: RetryPolicy | null;
  /** Tools: an assistant's call of one waits for a person's approval (docs/waitpoints.md). */
  @Column('boolean', { default: false }) requires_approval: boolean;
  /** Tools: how long that wait lasts (null: APPROVAL_TIMEOUT_SECONDS); past it the call is refused. */
  @Column('integer', { nullable: true }) approval_timeout_seconds: number | null;
  /** Tools: where each call waiting for approval is posted, signed with the secret's value (docs/waitpoints.md). */
  @Column('jsonb', { nullable: true }) approval_webhook: ApprovalWebhook | null;
  @Column('text') created_by: string;
  @Column('timestamptz') created_at: Date;
  @Column('timestamptz') updated_at: Date;
}

// The contract between the api (which starts workflows and sends signals) and the worker (which runs them):
// workflow types with their inputs and results, how each kind of work ends (the endings its activities and its
// workflow's frame answer, which its terminal write records), and the signals. Services and workflows both
// import this module, never each other; workflows may import values from it (it only defines, it does no I/O).
import { defineSignal } from '@temporalio/workflow';
import type { CodeLocation, CodeResourceKind } from '../persistence/entities/code-resource';
import type { DeploymentStatus } from '../persistence/entities/deployment';
import type { DeliveryStatus } from '../persistence/entities/integration';
import type { DataJobStatus } from '../persistence/entities/data-connector';
import type { JobError } from '../persistence/entities/job-record';
import type { KnowledgeBaseJobStatus } from '../persistence/entities/knowledge-base';
import type { RunStatus } from '../persistence/entities/run';
import type { LostOutput } from '../runtime/process/log-pump';
import type { RetryPolicy } from './retry-policy';

import type { ResourceKind } from './workflow-start';

export { startOptionsFor, workflowIdOf, type ResourceKind, type WorkflowResource } from './workflow-start';
export { nextRetry, type RetryPolicy } from './retry-policy';

/** Structure, function and tool runs (ids structure-run-, function-run-, tool-run-<uuid>). */
export interface CodeRunInput {
  runId: string;
  /** Snapshot of RUN_TIME_LIMIT_SECONDS when the run was created. */
  timeLimitSeconds: number;
  /** Snapshot of RUN_HEARTBEAT_TIMEOUT_SECONDS: how long a silent worker is trusted. */
  heartbeatTimeoutSeconds: number;
  /** The run's retry policy (absent or null: one attempt). */
  retryPolicy?: RetryPolicy | null;
  /**
   * A run an assistant run calls (its child workflow), or one a data job or knowledge base job starts (the
   * `structure` source, transforms): it takes no slot of the organization's share of its own.
   */
  inParentSlot?: boolean;
}

export interface AssistantRunInput {
  runId: string;
  /** Snapshot of RUN_TIME_LIMIT_SECONDS when the run was created: the whole run, tool calls included. */
  timeLimitSeconds: number;
  heartbeatTimeoutSeconds: number;
  /** Snapshot of ASSISTANT_MAX_STEPS: model calls per run. */
  maxSteps: number;
  /** The run's retry policy (absent or null: one attempt). */
  retryPolicy?: RetryPolicy | null;
}

export interface ChatMessageInput {
  runId: string;
  /** Snapshot of CHAT_MESSAGE_TIME_LIMIT_SECONDS when the exchange was created. */
  timeLimitSeconds: number;
  heartbeatTimeoutSeconds: number;
}

export interface DeploymentInput {
  deploymentId: string;
  kind: CodeResourceKind;
  /** The resource's code location and config file when the deployment was requested. */
  code: CodeLocation;
  configFile: string;
  /** codehost: check out this commit instead of the branch/tag head. */
  commitSha?: string;
  /** codehost: the request's access token, sealed with the secrets key (bound to the deployment id). */
  sealedAccessToken?: string;
  /** Snapshot of DEPLOYMENT_TIME_LIMIT_SECONDS. */
  timeLimitSeconds: number;
  /**
   * Snapshot of RUN_HEARTBEAT_TIMEOUT_SECONDS: a build whose worker is silent this long is presumed lost;
   * cancellation (the time limit) reaches the build within about 80% of it.
   */
  heartbeatTimeoutSeconds: number;
}

export interface InviteInput {
  inviteId: string;
  organizationId: string;
  /** ISO timestamp; the invite expires then unless answered. */
  expiresAt: string;
  /** Mail the invite's link first (SMTP_URL was set when it was made); absent on invites made before. */
  mail?: boolean;
}

/** Knowledge base jobs (id knowledge-base-job-<uuid>): extract, chunk, embed and store the KB's assets. */
export interface KnowledgeBaseJobInput {
  jobId: string;
  /** Snapshot of KNOWLEDGE_BASE_JOB_TIME_LIMIT_SECONDS when the job was created. */
  timeLimitSeconds: number;
  heartbeatTimeoutSeconds: number;
}

/** Data jobs (id data-job-<uuid>): fetch a data connector's items into its bucket. */
export interface DataJobInput {
  jobId: string;
  /** Snapshot of DATA_JOB_TIME_LIMIT_SECONDS when the job was created. */
  timeLimitSeconds: number;
  heartbeatTimeoutSeconds: number;
}

/** Started by the Temporal Schedule of a data connector or knowledge base (src/temporal/user-schedules.ts). */
export interface ScheduledJobInput {
  target: 'data-connector' | 'knowledge-base';
  id: string;
  organizationId: string;
}

/** What a scheduled start did: the job it created, or why none (one still open, the resource gone). */
export type ScheduledJobOutcome = { jobId: string } | { skipped: string };

/** Started by the Temporal Schedule of a structure, function or assistant (src/temporal/run-schedules.ts). */
export interface ScheduledRunInput {
  scheduleId: string;
  organizationId: string;
}

/** What a fire did: the run it made (and how that run ended), or why none (the schedule or resource gone, ...). */
export type ScheduledRunOutcome = { runId: string; status: RunStatus | 'MISSING' } | { skipped: string };

/** A knowledge base query (id knowledge-base-query-<uuid>): the worker embeds the query, ranks and persists. */
export interface KnowledgeBaseQueryInput {
  queryId: string;
  knowledgeBaseId: string;
  organizationId: string;
  createdBy: string;
  query: string;
  args: KnowledgeBaseQueryArgs;
}

export interface KnowledgeBaseQueryArgs {
  count: number;
  filter?: Record<string, string | number | boolean>;
  distance_metric?: 'cosine';
  include_vectors?: boolean;
}

/**
 * The work of an accepted chatapp or codehost_app delivery (id integration-delivery-<uuid>): start the linked
 * structures and assistants or the deployments a push asks for, wait for the assistants, post their answers.
 */
export interface IntegrationDeliveryInput {
  deliveryId: string;
  /** Snapshot of INTEGRATION_DELIVERY_TIME_LIMIT_SECONDS when the delivery was accepted. */
  timeLimitSeconds: number;
  heartbeatTimeoutSeconds: number;
}

/** A knowledge base search (id knowledge-base-search-<uuid>): retrieve, the default model answers, persist. */
export interface KnowledgeBaseSearchInput {
  searchId: string;
  knowledgeBaseId: string;
  organizationId: string;
  createdBy: string;
  query: string;
  args: KnowledgeBaseQueryArgs;
}

/** A retriever query (id retriever-query-<uuid>): each component retrieves, fused, maybe reranked, persisted. */
export interface RetrieverQueryInput {
  retrieverQueryId: string;
  retrieverId: string;
  organizationId: string;
  createdBy: string;
  query: string;
  /** Per component name: `{count?, filter?}`. */
  componentArgs: Record<string, { count?: number; filter?: Record<string, string | number | boolean> }>;
}

/** The builds of a deleted structure, function or tool (id build-removal-<resource uuid>). */
export interface BuildRemovalInput {
  resourceId: string;
  /** Every deployment the resource had when it was deleted (their rows are gone by now). */
  deploymentIds: string[];
}

export type InviteOutcome = 'ACCEPTED' | 'REJECTED' | 'EXPIRED' | 'GONE';

/** The reconciler (started every minute by its schedule, src/temporal/schedules.ts). */
export interface ReconcilerInput {
  /** Rows untouched this long are looked at (default 60). */
  olderThanSeconds?: number;
  /** At most this many rows of each kind per pass (default 500). */
  limit?: number;
}

/** What one pass of the reconciler settled: how many rows of each kind (and execution slots it freed). */
export type ReconcilerOutcome = Record<string, number>;

/** The sweep of build directories (started every 10 minutes by its schedule). */
export interface BuildCleanupInput {
  /** How long a superseded build is kept (default BUILD_RETENTION_SECONDS). */
  retentionSeconds?: number;
}

export interface BuildCleanupOutcome {
  removed: number;
  bytes: number;
  /** Directories with no deployment row (their resource was deleted) among `removed`. */
  orphans: number;
  kept: number;
}

export interface BuildRemovalOutcome {
  removed: number;
  cancelled: number;
}

/**
 * How a run ended, as decided by its activity (the process's outcome, the assistant's answer) or by the
 * workflow's frame (cancel, time limit, a failed activity); the run's terminal write records it.
 */
export type RunEnding =
  /**
   * A process that exited (`exitCode`), or an assistant run that answered. `output`: function and
   * assistant runs, the result (recorded with output_timestamp = now).
   */
  | {
      status: 'SUCCEEDED' | 'FAILED';
      exitCode?: number;
      message: string | null;
      output?: unknown;
      /** Output the platform could not store (docs/code-runs.md#lost-output). */
      outputLost?: LostOutput;
    }
  /** ERROR: the platform could not run it; FAILED with a reason: an assistant run's model refused (e.g. a bad request). */
  | { status: 'ERROR' | 'FAILED'; reason: string; error: string; outputLost?: LostOutput }
  | { status: 'CANCELLED'; requestedBy: string };

/** A run's attempt `attempt` ended with `ending`, which its retry policy retries after `delaySeconds`. */
export interface RetryWrite {
  attempt: number;
  ending: RunEnding;
  delaySeconds: number;
  reason: string;
}

/** The input of the activities that send a run back to QUEUED for its next attempt (retryCodeRun, retryAssistantRun). */
export type RunRetryInput = { runId: string } & RetryWrite;

/** How a deployment's build ended: the build activity's outcome, or the frame's (time limit, a failed build activity). */
export type DeploymentOutcome =
  | {
      status: 'SUCCEEDED';
      /** Null: nothing was built (a tool of `mcp` code: its server was listed). */
      buildPath: string | null;
      /** The build's artifact in the blob store; absent from builds of workers before artifacts. */
      artifact?: { key: string; sha256: string; size: number };
      codeSource: Record<string, unknown>;
      fingerprint: string | null;
      detail: Record<string, unknown>;
    }
  | {
      status: 'FAILED' | 'ERROR';
      /** `requested_by`: who cancelled it (reason Cancelled, by the api's cancel). */
      detail: { reason: string; message: string; build_output_tail?: string; requested_by?: string };
      codeSource?: Record<string, unknown>;
    };

/**
 * How a job (knowledge base job, data job, integration delivery) ended. Its long activity answers SUCCEEDED
 * or FAILED; the frame (workflows/run-scope.ts, `jobToEnding`) answers CANCELLED with `requestedBy`, or FAILED
 * with a `reason` (TimeLimitExceeded, the failed activity's type) and a `message`.
 */
export interface JobEnding {
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
  reason?: string;
  message?: string;
  requestedBy?: string;
}

export interface KnowledgeBaseJobEnding extends JobEnding {
  errors?: JobError[];
  bytesIngested?: number;
  stats?: Record<string, number>;
}

export interface DataJobEnding extends KnowledgeBaseJobEnding {
  /** Knowledge base jobs the chain started (status_detail.knowledge_base_job_ids). */
  knowledgeBaseJobIds?: string[];
}

export type DeliveryEnding = JobEnding;

/** Workflow signatures: what starts and child executions are typed by. */
export type CodeRunWorkflow = (input: CodeRunInput) => Promise<RunStatus | 'MISSING'>;
export type AssistantRunWorkflow = (input: AssistantRunInput) => Promise<RunStatus | 'MISSING'>;
export type ChatMessageWorkflow = (input: ChatMessageInput) => Promise<RunStatus | 'MISSING'>;
export type DeploymentWorkflow = (input: DeploymentInput) => Promise<DeploymentStatus | 'MISSING'>;
export type InviteWorkflow = (input: InviteInput) => Promise<InviteOutcome | 'WITHDRAWN'>;
export type KnowledgeBaseJobWorkflow = (input: KnowledgeBaseJobInput) => Promise<KnowledgeBaseJobStatus | 'MISSING'>;
export type IntegrationDeliveryWorkflow = (input: IntegrationDeliveryInput) => Promise<DeliveryStatus | 'MISSING'>;
export type DataJobWorkflow = (input: DataJobInput) => Promise<KnowledgeBaseJobStatus | 'MISSING'>;
export type ScheduledJobWorkflow = (input: ScheduledJobInput) => Promise<ScheduledJobOutcome>;
export type ScheduledRunWorkflow = (input: ScheduledRunInput) => Promise<ScheduledRunOutcome>;
/** Answers 'DONE' once the query row is written, 'MISSING' when the knowledge base is gone. */
export type KnowledgeBaseQueryWorkflow = (input: KnowledgeBaseQueryInput) => Promise<'DONE' | 'MISSING'>;
/** Like a query: 'DONE' once the search row is written, 'MISSING' when the knowledge base is gone. */
export type KnowledgeBaseSearchWorkflow = (input: KnowledgeBaseSearchInput) => Promise<'DONE' | 'MISSING'>;
export type RetrieverQueryWorkflow = (input: RetrieverQueryInput) => Promise<'DONE' | 'MISSING'>;
export type ReconcilerWorkflow = (input?: ReconcilerInput) => Promise<ReconcilerOutcome>;
export type BuildCleanupWorkflow = (input?: BuildCleanupInput) => Promise<BuildCleanupOutcome>;
export type BuildRemovalWorkflow = (input: BuildRemovalInput) => Promise<BuildRemovalOutcome>;

/**
 * Every workflow type the worker registers, by name, with its signature: workflows/index.ts exports exactly
 * these (test/workflows/index.test.ts fails to compile otherwise), and `WORKFLOW_TYPES` names them.
 */
export interface WorkflowSignatures {
  codeRunWorkflow: CodeRunWorkflow;
  /** codeRunWorkflow under its former name: runs started before the rename replay on it; nothing starts it. */
  structureRunWorkflow: CodeRunWorkflow;
  assistantRunWorkflow: AssistantRunWorkflow;
  chatMessageWorkflow: ChatMessageWorkflow;
  deploymentWorkflow: DeploymentWorkflow;
  inviteWorkflow: InviteWorkflow;
  reconcilerWorkflow: ReconcilerWorkflow;
  buildCleanupWorkflow: BuildCleanupWorkflow;
  buildRemovalWorkflow: BuildRemovalWorkflow;
  knowledgeBaseJobWorkflow: KnowledgeBaseJobWorkflow;
  knowledgeBaseQueryWorkflow: KnowledgeBaseQueryWorkflow;
  integrationDeliveryWorkflow: IntegrationDeliveryWorkflow;
  dataJobWorkflow: DataJobWorkflow;
  scheduledJobWorkflow: ScheduledJobWorkflow;
  scheduledRunWorkflow: ScheduledRunWorkflow;
  knowledgeBaseSearchWorkflow: KnowledgeBaseSearchWorkflow;
  retrieverQueryWorkflow: RetrieverQueryWorkflow;
}

/** Workflow type names, as the worker registers them (the exported function names of workflows/). */
export const WORKFLOW_TYPES = {
  codeRun: 'codeRunWorkflow',
  /** Replay only (see WorkflowSignatures). */
  structureRun: 'structureRunWorkflow',
  assistantRun: 'assistantRunWorkflow',
  chatMessage: 'chatMessageWorkflow',
  deployment: 'deploymentWorkflow',
  invite: 'inviteWorkflow',
  reconciler: 'reconcilerWorkflow',
  buildCleanup: 'buildCleanupWorkflow',
  buildRemoval: 'buildRemovalWorkflow',
  knowledgeBaseJob: 'knowledgeBaseJobWorkflow',
  knowledgeBaseQuery: 'knowledgeBaseQueryWorkflow',
  integrationDelivery: 'integrationDeliveryWorkflow',
  dataJob: 'dataJobWorkflow',
  scheduledJob: 'scheduledJobWorkflow',
  scheduledRun: 'scheduledRunWorkflow',
  knowledgeBaseSearch: 'knowledgeBaseSearchWorkflow',
  retrieverQuery: 'retrieverQueryWorkflow',
} as const satisfies Record<string, keyof WorkflowSignatures>;

/** A workflow to start: its type and its arguments, built only by `workflowStart` (so they match). */
export interface WorkflowStart {
  type: string;
  args: unknown[];
}

export const workflowStart = {
  codeRun: (input: CodeRunInput): WorkflowStart => ({ type: WORKFLOW_TYPES.codeRun, args: [input] }),
  assistantRun: (input: AssistantRunInput): WorkflowStart => ({ type: WORKFLOW_TYPES.assistantRun, args: [input] }),
  chatMessage: (input: ChatMessageInput): WorkflowStart => ({ type: WORKFLOW_TYPES.chatMessage, args: [input] }),
  deployment: (input: DeploymentInput): WorkflowStart => ({ type: WORKFLOW_TYPES.deployment, args: [input] }),
  invite: (input: InviteInput): WorkflowStart => ({ type: WORKFLOW_TYPES.invite, args: [input] }),
  buildRemoval: (input: BuildRemovalInput): WorkflowStart => ({ type: WORKFLOW_TYPES.buildRemoval, args: [input] }),
  knowledgeBaseJob: (input: KnowledgeBaseJobInput): WorkflowStart => ({
    type: WORKFLOW_TYPES.knowledgeBaseJob,
    args: [input],
  }),
  knowledgeBaseQuery: (input: KnowledgeBaseQueryInput): WorkflowStart => ({
    type: WORKFLOW_TYPES.knowledgeBaseQuery,
    args: [input],
  }),
  integrationDelivery: (input: IntegrationDeliveryInput): WorkflowStart => ({
    type: WORKFLOW_TYPES.integrationDelivery,
    args: [input],
  }),
  dataJob: (input: DataJobInput): WorkflowStart => ({ type: WORKFLOW_TYPES.dataJob, args: [input] }),
  knowledgeBaseSearch: (input: KnowledgeBaseSearchInput): WorkflowStart => ({
    type: WORKFLOW_TYPES.knowledgeBaseSearch,
    args: [input],
  }),
  retrieverQuery: (input: RetrieverQueryInput): WorkflowStart => ({
    type: WORKFLOW_TYPES.retrieverQuery,
    args: [input],
  }),
};

export interface CancelRunSignal {
  /** Who asked (user id or API key id), recorded in status_detail. */
  requestedBy: string;
}

/** Sent by the api's cancel endpoints (and when a resource with open runs is deleted) to every run workflow. */
export const cancelRunSignal = defineSignal<[CancelRunSignal]>('cancel');

/**
 * Sent to a job's workflow that waits for an execution slot of its organization (src/jobs/admission.ts) by
 * whoever granted it one: the job that released it, or the reconciler.
 */
export const slotGrantedSignal = defineSignal('slotGranted');

/** A job that takes an execution slot of its organization: its kind and id (the row of its table). */
export interface ExecutionSlotJob {
  kind: 'run' | 'deployment' | 'knowledge_base_job' | 'data_job';
  jobId: string;
  /** A run an assistant run calls: it executes in its parent's slot of the organization (limits of its own resource apply). */
  inParentSlot?: boolean;
}

export interface InviteResponseSignal {
  response: 'ACCEPTED' | 'REJECTED';
  /** Who answered (user id or API key id), for the history. */
  respondedBy: string;
}

export const respondSignal = defineSignal<[InviteResponseSignal]>('respond');
/** The invite was deleted: stop waiting. */
export const withdrawSignal = defineSignal('withdraw');

// The waitpoints an assistant run waits on: their signal and what its approval steps pass (docs/waitpoints.md).
export * from './waitpoint-signals';

// What workflows and their activities pass each other. Workflows import types only from this module
// (eslint.config.mjs), so the ones they need are defined or re-exported here.

export type { RunStatus } from '../persistence/entities/run';
export type { DeploymentStatus } from '../persistence/entities/deployment';
export type { DeliveryStatus } from '../persistence/entities/integration';
export type { KnowledgeBaseJobStatus } from '../persistence/entities/knowledge-base';
export type { DataJobStatus } from '../persistence/entities/data-connector';

/** A child run an assistant run's workflow starts (its row is inserted by planChildRun). */
export interface ChildRun {
  childRunId: string;
  workflowKind: ResourceKind;
  organizationId: string;
  summary: string;
}

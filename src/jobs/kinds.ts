// The registry of durable jobs: every record with a status that a workflow moves (runs, deployments,
// knowledge base jobs, data jobs, integration deliveries) is one JobKind here. The kernel knows tables and
// statuses, not domains: from a kind it derives the guarded transition (transition.ts), the start
// (start.ts), the cancel and stop (cancel.ts), the reconciliation of lost jobs (reconcile.ts) and the jobs
// metric (metric.ts). A new kind of job is a new entry of JOB_KINDS; everything else comes with it.
import type { NewEvent } from '../persistence/run-feed';
import { RUN_CHANNEL } from '../persistence/run-feed';
import { DEPLOYMENT_TERMINAL } from '../persistence/entities/deployment';
import { RUN_TERMINAL } from '../persistence/entities/run';
import type { ResourceKind } from '../temporal/workflow-start';

/** A row as the kernel reads it (`RETURNING *`, or the columns a kind names). */
export type Row = Record<string, unknown>;

/** A table whose rows carry a status that only moves forward and never leaves a terminal one. */
export interface StatusKind {
  table: string;
  idColumn: string;
  /** For each status, the statuses it may be reached from (none: a row is only created so). */
  from: Readonly<Record<string, readonly string[]>>;
  terminal: readonly string[];
  /** Columns passed as JSON text, so pg does not turn arrays into PostgreSQL arrays. */
  jsonColumns?: readonly string[];
  /**
   * A terminal move sets completed_at = now() (unless the caller sets it) and clears these columns; with
   * `keepDetail`, finishJob (./finish.ts) adds the ending's words to the status_detail the row has.
   */
  onEnd?: { stampCompletedAt?: boolean; clear?: readonly string[]; keepDetail?: boolean };
  /** Sent in the same statement when a row moved: `pg_notify(channel, '<id> <epoch seconds>')`. */
  notifyChannel?: string;
  /** Its rows have a feed of events (run_events, src/persistence/run-feed.ts) that a move may append to. */
  eventFeed?: boolean;
}

/** How Temporal sees a job's workflow: RUNNING, NOT_FOUND, or the name of its closed state. */
export type WorkflowState = string;

/** What a job whose workflow is gone becomes (and, for runs, the last event it records). */
export interface LostEnding {
  to: string;
  changes: Row;
  events?: NewEvent[];
}

export interface JobKind extends StatusKind {
  /** The kind's name in the reconciler's counts. */
  name: 'runs' | 'deployments' | 'knowledgeBaseJobs' | 'integrationDeliveries' | 'dataJobs';
  /** What the kind's refusals call a job ("This run already ended"). */
  noun: string;
  /** The statuses of a job that has not ended, in order: the first is QUEUED, the second where a start moves it. */
  open: readonly string[];
  /** Columns besides the id that `resourceKind` reads. */
  rowColumns: readonly string[];
  /** The resource kind of the job's workflow (id `<kind>-<job id>`), also the jobs metric's `kind` label. */
  resourceKind: (row: Row) => ResourceKind;
  /** Also observe the queue-to-start and duration histograms (runs). */
  timed?: boolean;
  /** What a job becomes when its workflow closed (or never existed) without recording an end. */
  lost: (row: Row, state: WorkflowState, reason: string) => LostEnding;
  /** Whether an ended job ended cancelled (default: status CANCELLED; a kind without that status says how). */
  cancelled?: (row: Row) => boolean;
}

/** Whether `row`, a job of `kind`, ended cancelled. */
export const endedCancelled = (kind: JobKind, row: Row): boolean =>
  kind.cancelled ? kind.cancelled(row) : row.status === 'CANCELLED';

/** Forward only: an open status is reached from the open ones before it, a terminal one from any open one. */
function forwardOnly(open: readonly string[], terminal: readonly string[]): Record<string, string[]> {
  const from: Record<string, string[]> = {};
  open.forEach((s, i) => (from[s] = open.slice(0, i)));
  for (const t of terminal) from[t] = [...open];
  return from;
}

const cancelledOrFailed = (state: WorkflowState, reason: string): LostEnding =>
  state === 'CANCELLED'
    ? { to: 'CANCELLED', changes: { status_detail: { reason: 'Cancelled', message: reason } } }
    : { to: 'FAILED', changes: { status_detail: { reason: 'WorkflowClosed', message: reason } } };

const RUN_OPEN = ['QUEUED', 'STARTING', 'RUNNING'];

export const RUN_JOB: JobKind = {
  name: 'runs',
  noun: 'run',
  table: 'runs',
  idColumn: 'run_id',
  open: RUN_OPEN,
  terminal: RUN_TERMINAL,
  // Back to QUEUED only for the next attempt of a retry policy (services/code/runs/retries.ts), guarded there by
  // the attempt number.
  from: { ...forwardOnly(RUN_OPEN, RUN_TERMINAL), QUEUED: ['STARTING', 'RUNNING'] },
  jsonColumns: ['status_detail', 'output', 'attempts', 'limits'],
  // The process's ending kept for a lost answer of the execute activity (code/runs/lifecycle.ts recordEnding).
  onEnd: { clear: ['execution_ending'] },
  notifyChannel: RUN_CHANNEL,
  eventFeed: true,
  timed: true,
  rowColumns: ['kind'],
  resourceKind: (row) => `${row.kind as string}-run` as ResourceKind,
  lost: (row, state, reason) =>
    state === 'CANCELLED'
      ? {
          to: 'CANCELLED',
          changes: { status_detail: { reason: 'Cancelled', message: reason }, completed_at: new Date() },
        }
      : {
          to: 'ERROR',
          changes: { status_detail: { error: reason, reason: 'WorkflowClosed' }, completed_at: new Date() },
          // A structure run's stream ends with the event that says why.
          events:
            row.kind === 'structure'
              ? [
                  {
                    type: 'StructureRunError',
                    origin: 'SYSTEM',
                    payload: { status: 'ERROR', status_detail: { error: reason } },
                  },
                ]
              : [],
        },
};

const DEPLOYMENT_OPEN = ['QUEUED', 'DEPLOYING'];

export const DEPLOYMENT_JOB: JobKind = {
  name: 'deployments',
  noun: 'deployment',
  table: 'deployments',
  idColumn: 'deployment_id',
  open: DEPLOYMENT_OPEN,
  terminal: DEPLOYMENT_TERMINAL,
  from: forwardOnly(DEPLOYMENT_OPEN, DEPLOYMENT_TERMINAL),
  jsonColumns: ['status_detail', 'code_source'],
  rowColumns: [],
  resourceKind: () => 'deployment',
  lost: (_row, state, reason) => ({
    to: 'ERROR',
    changes: {
      status_detail: { reason: state === 'CANCELLED' ? 'Cancelled' : 'WorkflowClosed', message: reason },
      completed_at: new Date(),
    },
  }),
  // Deployments have no CANCELLED status (the clients know five): a cancelled one ends ERROR, reason Cancelled.
  cancelled: (row) =>
    row.status === 'ERROR' && (row.status_detail as { reason?: string } | null)?.reason === 'Cancelled',
};

/** Knowledge base jobs, data jobs and integration deliveries: QUEUED → RUNNING → SUCCEEDED | FAILED | CANCELLED. */
const JOB_OPEN = ['QUEUED', 'RUNNING'];
const JOB_TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

const ingestionJob = (name: JobKind['name'], table: string, idColumn: string, kind: ResourceKind): JobKind => ({
  name,
  noun: 'job',
  table,
  idColumn,
  open: JOB_OPEN,
  terminal: JOB_TERMINAL,
  from: forwardOnly(JOB_OPEN, JOB_TERMINAL),
  jsonColumns: ['status_detail', 'errors'],
  onEnd: { stampCompletedAt: true },
  rowColumns: [],
  resourceKind: () => kind,
  lost: (_row, state, reason) => cancelledOrFailed(state, reason),
});

export const KNOWLEDGE_BASE_JOB = ingestionJob(
  'knowledgeBaseJobs',
  'knowledge_base_jobs',
  'knowledge_base_job_id',
  'knowledge-base-job',
);

export const DATA_JOB = ingestionJob('dataJobs', 'data_jobs', 'data_job_id', 'data-job');

export const INTEGRATION_DELIVERY: JobKind = {
  ...ingestionJob('integrationDeliveries', 'integration_deliveries', 'delivery_id', 'integration-delivery'),
  noun: 'delivery',
  jsonColumns: ['status_detail'],
  // The kept request is only needed until the delivery's work ended.
  onEnd: { stampCompletedAt: true, clear: ['payload'], keepDetail: true },
};

/** Every kind of durable job, in the order the reconciler visits them. */
export const JOB_KINDS: readonly JobKind[] = [
  RUN_JOB,
  DEPLOYMENT_JOB,
  KNOWLEDGE_BASE_JOB,
  INTEGRATION_DELIVERY,
  DATA_JOB,
];

const INVITE_OPEN = ['PENDING'];
const INVITE_TERMINAL = ['ACCEPTED', 'REJECTED', 'EXPIRED'];

/** Invites: a status record, not a job (no start, no reconciliation, not in the jobs metric). */
export const INVITE_RECORD: StatusKind = {
  table: 'invites',
  idColumn: 'invite_id',
  terminal: INVITE_TERMINAL,
  from: forwardOnly(INVITE_OPEN, INVITE_TERMINAL),
};

/**
 * Waitpoints (docs/waitpoints.md): a status record, not a job: the run that waits on one is the job. WAITING moves
 * once, to how it ended; a run that ends cancels its waitpoints still waiting (a trigger of the runs table).
 */
export const WAITPOINT_RECORD: StatusKind = {
  table: 'waitpoints',
  idColumn: 'waitpoint_id',
  terminal: ['COMPLETED', 'TIMED_OUT', 'CANCELLED'],
  from: forwardOnly(['WAITING'], ['COMPLETED', 'TIMED_OUT', 'CANCELLED']),
  jsonColumns: ['completion'],
  onEnd: { stampCompletedAt: true },
};

export const isJobKind = (kind: StatusKind): kind is JobKind => 'resourceKind' in kind;

// The one place a code run (of a structure, function or tool) begins: its request's arguments and env vars
// checked, its QUEUED row built on the resource's latest SUCCEEDED deployment (queuedCodeRun), and the row
// inserted together with its workflow `<kind>-run-<uuid>` (the kernel's insertAndStart). The api's creates by
// id (createRunOf: one statement with the reads), and everything that holds the resource already: replays,
// schedules, integration deliveries, function executes, data jobs' and knowledge base jobs' transforms
// (beginRun, startRun). An assistant's tool run is a child workflow of the assistant run: its row comes from
// queuedCodeRun too (assistants/child-runs.ts).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DataSource } from 'typeorm';
import type { Caller } from '../../caller';
import { badRequest, conflict } from '../../../errors';
import type { Config } from '../../../config';
import type { RunUpdatesHub } from '../../../persistence/run-updates-hub';
import { CodeResource, Deployment, Run } from '../../../persistence/entities';
import type { CodeResourceKind, EnvVar } from '../../../persistence/entities/code-resource';
import { newRunRow } from '../../../persistence/entities/run';
import { latestSuccessfulDeployment } from '../deployments';
import { workflowStart } from '../../../temporal/contracts';
import { insertAndStart } from '../../../jobs/create';
import { insertRow } from '../../../persistence/direct-sql';
import type { RetryPolicy } from '../../../temporal/retry-policy';
import { insertRunOfLatestDeployment } from './insert-run';

/** Linux refuses a single argv/env string longer than this (MAX_ARG_STRLEN, 128 KiB including the NUL). */
export const MAX_ARG_BYTES = 131_071;

export interface RunsDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
  /** The api's LISTEN connection: waits for a run's end are woken by its notifications instead of polling. */
  runUpdates?: RunUpdatesHub;
}

/** Arguments and env vars end up in execve(): no NUL characters, each string within the kernel's limit. */
export function checkExecStrings(args: string[], envVars: EnvVar[], where: string) {
  args.forEach((a, i) => {
    if (a.includes('\u0000')) throw badRequest('Arguments must not contain NUL characters', `${where}/args/${i}`);
    if (Buffer.byteLength(a) > MAX_ARG_BYTES)
      throw badRequest(`Each argument is limited to ${MAX_ARG_BYTES} bytes`, `${where}/args/${i}`);
  });
  envVars.forEach((v, i) => {
    if (v.value.includes('\u0000'))
      throw badRequest('Env var values must not contain NUL characters', `${where}/env_vars/${i}/value`);
    if (Buffer.byteLength(v.name) + Buffer.byteLength(v.value) + 1 > MAX_ARG_BYTES) {
      throw badRequest(`Each env var is limited to ${MAX_ARG_BYTES} bytes`, `${where}/env_vars/${i}`);
    }
  });
}

/** A request's env vars as a run stores them (`source` lower case, `manual` when absent). */
/** An env var as requests give it: `source` in either case (griptape sends `MANUAL`), `manual` when absent. */
export type RequestEnvVar = Omit<EnvVar, 'source'> & { source?: 'manual' | 'secret_ref' | 'MANUAL' | 'SECRET_REF' };

export const runEnvVars = (vars: RequestEnvVar[]): EnvVar[] =>
  vars.map((v) => ({ name: v.name, value: v.value, source: (v.source ?? 'manual').toLowerCase() as EnvVar['source'] }));

/**
 * A run the api creates by its resource's id: on the resource's latest SUCCEEDED deployment (404 for a resource
 * not in the caller's organization, 409 without a successful deployment), as a QUEUED row inserted (in one
 * statement with those reads: insert-run.ts) together with its workflow. What startRun does for a resource
 * already read.
 */
export async function createRunOf(
  deps: RunsDeps,
  caller: Caller,
  kind: CodeResourceKind,
  resourceId: string,
  fields: {
    args: string[];
    envVars: EnvVar[];
    input: unknown;
    concurrencyKey?: string;
    /** Instead of the resource's (null: none). */
    retryPolicy?: RetryPolicy | null;
  },
): Promise<Run> {
  const row = newRunRow({
    run_id: randomUUID(),
    kind,
    organization_id: caller.organizationId,
    resource_id: resourceId,
    args: fields.args,
    env_vars: fields.envVars,
    input: fields.input,
    created_by: caller.actor,
    concurrency_key: fields.concurrencyKey ?? null,
  });
  const { run } = await insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: { kind: `${kind}-run`, id: row.run_id, organizationId: row.organization_id, summary: '' },
    insert: (em) => insertRunOfLatestDeployment(em, kind, row, fields.retryPolicy),
    oneStatement: true,
    undo: (em) => em.query(`DELETE FROM runs WHERE run_id = $1`, [row.run_id]),
    start: (inserted) => ({ ...codeRunStart(deps, inserted.run), summary: runSummary(kind, inserted.resourceName) }),
  });
  return run;
}

/** The workflow start of a code run (one workflow type drives every kind; the execution activity picks the command by run kind). */
const codeRunStart = (deps: RunsDeps, run: Run, inParentSlot?: boolean) =>
  workflowStart.codeRun({
    runId: run.run_id,
    timeLimitSeconds: deps.config.runJob.timeLimitSeconds,
    heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
    ...(run.retry_policy ? { retryPolicy: run.retry_policy } : {}),
    // The job that waits for it holds an execution slot: counting the run too could leave both waiting.
    ...(inParentSlot ? { inParentSlot: true } : {}),
  });

const runSummary = (kind: CodeResourceKind, name: string) => `Run of ${kind} ${name}`;

/**
 * The QUEUED row of a run of `resource` on its latest SUCCEEDED deployment, or undefined when it has none:
 * the one row builder of every code run (beginRun's, and an assistant's child run).
 */
export async function queuedCodeRun(
  ds: DataSource,
  resource: CodeResource,
  fields: {
    runId: string;
    organizationId: string;
    createdBy: string;
    args: string[];
    envVars: EnvVar[];
    input: unknown;
    /** A SUCCEEDED deployment of `resource` to run instead of its latest (a replay that pins one). */
    deployment?: Deployment;
    replayedFromRunId?: string;
    /** docs/run-control.md#concurrency-keys-and-limits */
    concurrencyKey?: string;
    /** Instead of the resource's (null: none). */
    retryPolicy?: RetryPolicy | null;
  },
): Promise<Run | undefined> {
  const deployment = fields.deployment ?? (await latestSuccessfulDeployment(ds, resource.resource_id));
  if (!deployment) return undefined;
  return newRunRow({
    run_id: fields.runId,
    kind: resource.kind,
    organization_id: fields.organizationId,
    resource_id: resource.resource_id,
    deployment_id: deployment.deployment_id,
    args: fields.args,
    env_vars: fields.envVars,
    input: fields.input,
    created_by: fields.createdBy,
    replayed_from_run_id: fields.replayedFromRunId ?? null,
    concurrency_key: fields.concurrencyKey ?? null,
    retry_policy: fields.retryPolicy === undefined ? resource.retry_policy : fields.retryPolicy,
  });
}

/** What a run of a resource already read begins with (its row's fields). */
export interface RunFields {
  args: string[];
  envVars: EnvVar[];
  input: unknown;
  /** An id chosen by the caller (deliveries, schedules and transforms derive it, so a retry finds the run). */
  runId?: string;
  /** A SUCCEEDED deployment to run instead of the latest (a replay that pins one). */
  deployment?: Deployment;
  replayedFromRunId?: string;
  concurrencyKey?: string;
  /** Instead of the resource's (null: none). */
  retryPolicy?: RetryPolicy | null;
  /** Runs in its parent job's execution slot (a data job's or knowledge base job's transform). */
  inParentSlot?: boolean;
  /** The workflow's summary in the Temporal UI, instead of "Run of <kind> <name>". */
  summary?: string;
}

/**
 * Begins a run of `resource` (created by `caller`) on its latest SUCCEEDED deployment, as a QUEUED row
 * inserted together with its workflow; undefined when the resource has no successful deployment.
 */
export async function beginRun(
  deps: RunsDeps,
  caller: Pick<Caller, 'organizationId' | 'actor'>,
  resource: CodeResource,
  fields: RunFields,
): Promise<Run | undefined> {
  const run = await queuedCodeRun(deps.ds, resource, {
    runId: fields.runId ?? randomUUID(),
    organizationId: caller.organizationId,
    createdBy: caller.actor,
    args: fields.args,
    envVars: fields.envVars,
    input: fields.input,
    deployment: fields.deployment,
    replayedFromRunId: fields.replayedFromRunId,
    concurrencyKey: fields.concurrencyKey,
    retryPolicy: fields.retryPolicy,
  });
  if (!run) return undefined;
  return insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: {
      kind: `${resource.kind}-run`,
      id: run.run_id,
      organizationId: run.organization_id,
      summary: fields.summary ?? runSummary(resource.kind, resource.name),
    },
    insert: (em) => insertRow(em, Run, run),
    oneStatement: true,
    undo: (em) => em.query(`DELETE FROM runs WHERE run_id = $1`, [run.run_id]),
    start: codeRunStart(deps, run, fields.inParentSlot),
  });
}

/** As beginRun, for a caller of the api: a resource without a successful deployment is a 409. */
export async function startRun(
  deps: RunsDeps,
  caller: Caller,
  resource: CodeResource,
  fields: RunFields,
): Promise<Run> {
  const run = await beginRun(deps, caller, resource, fields);
  if (!run) {
    throw conflict(
      `The ${resource.kind} ${resource.resource_id} has no successful deployment yet: deploy it and wait for status SUCCEEDED first`,
    );
  }
  return run;
}

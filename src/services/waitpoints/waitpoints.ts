// The api's side of waitpoints (docs/waitpoints.md): list and read them, make a token for a run's own code, and
// complete one, by a member of its organization or by its signed callback URL. Completing a tool approval sends
// the waiting run's workflow the `waitpointCompleted` signal (durable once Temporal took it: the workflow applies
// the first one for a waitpoint) and waits a bounded time for the workflow to record it; a token, whose run's
// process polls it, is completed here, by the guarded transition. A second completion answers the first's
// result and changes nothing; one of a waitpoint that timed out or was cancelled, or whose run ended, is a 409.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { In, type DataSource, type FindOptionsWhere } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { transition } from '../../jobs/transition';
import { WAITPOINT_RECORD } from '../../jobs/kinds';
import type { Caller } from '../caller';
import { conflict, forbidden, notFound } from '../../errors';
import { Run } from '../../persistence/entities';
import { Waitpoint, type WaitpointStatus } from '../../persistence/entities/waitpoint';
import type { PageRequest } from '../../persistence/pagination';
import { pageInOrg } from '../../persistence/scoped';
import type { SecretBox } from '../../security/secret-box';
import { waitpointCompletedSignal, type WaitpointCompletedSignal } from '../../temporal/contracts';
import { workflowIdOf } from '../../temporal/workflow-start';
import { isTerminal } from '../code/runs/lifecycle';

/** The longest GetWaitpoint's `wait_seconds`: a request held no longer than proxies commonly allow. */
export const MAX_WAIT_SECONDS = 60;

/** How long CompleteWaitpoint waits for the run to record the completion before answering the row as it is. */
export const COMPLETE_WAIT_MS = 10_000;
const POLL_MS = 100;

export interface WaitpointFilters {
  statuses?: WaitpointStatus[];
  runId?: string;
}

export function listWaitpoints(ds: DataSource, caller: Caller, page: PageRequest, filters: WaitpointFilters) {
  const where: FindOptionsWhere<Waitpoint> = {
    ...(filters.statuses?.length ? { status: In(filters.statuses) } : {}),
    ...(filters.runId ? { run_id: filters.runId } : {}),
  };
  return pageInOrg(ds, Waitpoint, caller.organizationId, page, where, { created_at: 'DESC', waitpoint_id: 'DESC' });
}

/** The waitpoint (a run's credential sees its own run's only), a token past its expiry settled TIMED_OUT first. */
export async function findWaitpoint(
  ds: DataSource,
  who: { organizationId: string; runId?: string | null },
  id: string,
): Promise<Waitpoint> {
  const row = await ds.getRepository(Waitpoint).findOneBy({ waitpoint_id: id, organization_id: who.organizationId });
  if (!row || (who.runId && row.run_id !== who.runId)) throw notFound('Waitpoint');
  return settledIfExpired(ds, row);
}

/**
 * A token past its expiry, TIMED_OUT (its process polls it; nothing else would move it). A tool approval's timeout
 * is its workflow's timer.
 */
async function settledIfExpired(ds: DataSource, w: Waitpoint): Promise<Waitpoint> {
  if (w.kind !== 'token' || w.status !== 'WAITING' || w.expires_at.getTime() > Date.now()) return w;
  const reason = `No one completed it within ${w.timeout_seconds} s`;
  await transition(ds, WAITPOINT_RECORD, w.waitpoint_id, 'TIMED_OUT', { completion: { approved: false, reason } });
  return ds.getRepository(Waitpoint).findOneByOrFail({ waitpoint_id: w.waitpoint_id });
}

/** The waitpoint once it no longer waits, or as it is after `seconds` (a token's process polls this way). */
export async function waitpointAfter(ds: DataSource, w: Waitpoint, seconds: number): Promise<Waitpoint> {
  const deadline = Date.now() + seconds * 1000;
  let now = w;
  while (now.status === 'WAITING' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    now = await settledIfExpired(
      ds,
      await ds.getRepository(Waitpoint).findOneByOrFail({ waitpoint_id: w.waitpoint_id }),
    );
  }
  return now;
}

export interface TokenRequest {
  timeout_seconds?: number;
  idempotency_key?: string;
  description?: string;
}

/**
 * A token for the caller's own run (a run's credential only): WAITING until completed or `timeout_seconds` pass.
 * One per idempotency key of the run: a repeat answers the first (`created: false`).
 */
export async function createToken(
  ds: DataSource,
  caller: Caller,
  body: TokenRequest,
  defaultTimeoutSeconds: number,
): Promise<{ waitpoint: Waitpoint; created: boolean }> {
  const runId = caller.runId;
  if (!runId)
    throw forbidden(
      "A waitpoint token is made by a run's own credential (GT_CLOUD_API_KEY in its code): it waits for its run",
    );
  const run = await ds.getRepository(Run).findOneBy({ run_id: runId });
  if (!run || isTerminal(run.status)) throw conflict(`The run ${runId} already ended`);
  const key = body.idempotency_key ?? null;
  if (key) {
    const held = await ds.getRepository(Waitpoint).findOneBy({ run_id: runId, idempotency_key: key });
    if (held) return { waitpoint: await settledIfExpired(ds, held), created: false };
  }
  const now = new Date();
  const timeoutSeconds = body.timeout_seconds ?? defaultTimeoutSeconds;
  const row: Waitpoint = {
    waitpoint_id: randomUUID(),
    organization_id: run.organization_id,
    run_id: runId,
    kind: 'token',
    status: 'WAITING',
    subject: body.description ? { description: body.description } : {},
    idempotency_key: key,
    timeout_seconds: timeoutSeconds,
    expires_at: new Date(now.getTime() + timeoutSeconds * 1000),
    completion: null,
    completed_by: null,
    completed_at: null,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  const inserted = await ds
    .createQueryBuilder()
    .insert()
    .into(Waitpoint)
    .values(row as QueryDeepPartialEntity<Waitpoint>)
    .orIgnore()
    .execute();
  if (inserted.identifiers.length) return { waitpoint: row, created: true };
  // The same key, made by a concurrent repeat meanwhile.
  const held = await ds.getRepository(Waitpoint).findOneByOrFail({ run_id: runId, idempotency_key: key ?? '' });
  return { waitpoint: held, created: false };
}

const callbackSignature = (box: SecretBox, waitpointId: string, expires: string) =>
  box.sign(JSON.stringify(['waitpoint-callback-v1', waitpointId, expires]));

/** The URL that completes the waitpoint without an API key, until the waitpoint expires. */
export function callbackUrl(box: SecretBox, publicBaseUrl: string, w: Waitpoint): string {
  const expires = String(Math.ceil(w.expires_at.getTime() / 1000));
  const query = new URLSearchParams({ expires, signature: callbackSignature(box, w.waitpoint_id, expires) });
  return `${publicBaseUrl}/api/waitpoints/${w.waitpoint_id}/callback?${query}`;
}

/** Checks a callback URL's signature and expiry: 403 with the reason otherwise. */
export function verifyCallback(
  box: SecretBox,
  waitpointId: string,
  query: { expires?: string; signature?: string },
  nowSeconds = Math.floor(Date.now() / 1000),
): void {
  const { expires, signature } = query;
  if (!expires || !signature || !/^\d{1,12}$/.test(expires))
    throw forbidden("This is not a waitpoint's callback URL: it needs its `expires` and `signature`");
  const expected = Buffer.from(callbackSignature(box, waitpointId, expires));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw forbidden('The callback signature is invalid: the URL was altered or not issued by this installation');
  if (Number(expires) < nowSeconds) throw forbidden('This callback URL expired with its waitpoint');
}

export interface CompletionRequest {
  approved: boolean;
  arguments?: Record<string, unknown>;
  /** A token's: what its run's code gets back. */
  output?: unknown;
  reason?: string;
}

/** Completes `w` as `completedBy`; answers the waitpoint once its run recorded it (or as it is after the wait). */
export async function completeWaitpoint(
  deps: { ds: DataSource; temporal: Client },
  w: Waitpoint,
  completedBy: string,
  body: CompletionRequest,
): Promise<Waitpoint> {
  if (w.status === 'COMPLETED') return w;
  if (w.status !== 'WAITING')
    throw conflict(`The waitpoint ${w.waitpoint_id} is ${w.status}: it can no longer be completed`);
  const run = await deps.ds.getRepository(Run).findOneBy({ run_id: w.run_id });
  if (!run || isTerminal(run.status))
    throw conflict(
      `The run ${w.run_id} already ended${run ? ` ${run.status}` : ''}: its waitpoint can no longer be completed`,
    );
  if (w.kind === 'token') return completeToken(deps.ds, w, completedBy, body);
  const signal: WaitpointCompletedSignal = {
    waitpointId: w.waitpoint_id,
    approved: body.approved,
    ...(body.approved && body.arguments ? { arguments: body.arguments } : {}),
    ...(body.reason ? { reason: body.reason } : {}),
    completedBy,
  };
  try {
    await deps.temporal.workflow
      .getHandle(workflowIdOf('assistant-run', w.run_id))
      .signal(waitpointCompletedSignal, signal);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw conflict(`The run ${w.run_id} is no longer running`);
    throw err;
  }
  const deadline = Date.now() + COMPLETE_WAIT_MS;
  for (;;) {
    const now = await deps.ds.getRepository(Waitpoint).findOneByOrFail({ waitpoint_id: w.waitpoint_id });
    if (now.status !== 'WAITING' || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** A token is completed here: its run's process reads the completion (its output) when it polls. */
async function completeToken(ds: DataSource, w: Waitpoint, completedBy: string, body: CompletionRequest) {
  const completion = {
    approved: body.approved,
    ...(body.output !== undefined ? { output: body.output } : {}),
    ...(body.reason ? { reason: body.reason } : {}),
  };
  await transition(ds, WAITPOINT_RECORD, w.waitpoint_id, 'COMPLETED', { completion, completed_by: completedBy });
  const now = await ds.getRepository(Waitpoint).findOneByOrFail({ waitpoint_id: w.waitpoint_id });
  if (now.status !== 'COMPLETED')
    throw conflict(`The waitpoint ${w.waitpoint_id} is ${now.status}: it can no longer be completed`);
  return now;
}

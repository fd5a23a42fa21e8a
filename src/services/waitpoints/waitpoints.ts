// The api's side of waitpoints (docs/waitpoints.md): list and read them, and complete one, by a member of its
// organization or by its signed callback URL. Completing sends the waiting run's workflow the
// `waitpointCompleted` signal (durable once Temporal took it: the workflow applies the first one for a waitpoint)
// and waits a bounded time for the workflow to record it. A second completion answers the first's result and
// changes nothing; one of a waitpoint that timed out or was cancelled, or whose run ended, is a 409.
import { timingSafeEqual } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { In, type DataSource, type FindOptionsWhere } from 'typeorm';
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

export async function findWaitpoint(ds: DataSource, organizationId: string, id: string): Promise<Waitpoint> {
  const row = await ds.getRepository(Waitpoint).findOneBy({ waitpoint_id: id, organization_id: organizationId });
  if (!row) throw notFound('Waitpoint');
  return row;
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

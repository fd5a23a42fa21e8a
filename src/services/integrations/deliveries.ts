// The delivery log: every hit of an integration's handler is a row (verdict, HTTP status, what it started),
// so a user can see why a call did or did not start anything. Also the rate limit (counted here, in
// PostgreSQL, so every api process shares it), the request as the linked structures receive it, and the
// start, status writes and cancel of a delivery's work (the job kernel's, like every job's).
import { createHash, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { Caller } from '../caller';
import {
  DeliveryError,
  DeliveryPayload,
  DeliveryStatus,
  DeliveryVerdict,
  Integration,
  IntegrationDelivery,
} from '../../persistence/entities/integration';
import type { PageRequest } from '../../persistence/pagination';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import { conflict } from '../../errors';
import { cancelAndWait } from '../../jobs/cancel';
import { findIntegration } from './integrations';
import { INTEGRATION_DELIVERY } from '../../jobs/kinds';
import { startJob } from '../../jobs/start';
import { transition } from '../../jobs/transition';

/** Headers a linked structure never sees: credentials of the sender. */
const SENSITIVE_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

/** `headers_json` and `query_params_json` of the three-argument convention: no credentials, no `api_key`. */
export function requestPayload(
  rawBody: string,
  query: Record<string, string | string[] | undefined>,
  headers: Record<string, string | string[] | undefined>,
): DeliveryPayload {
  const q: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(query)) if (v !== undefined && k !== 'api_key') q[k] = v;
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !SENSITIVE_HEADERS.has(k.toLowerCase()))
      h[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return { raw_body: rawBody, query: q, headers: h };
}

/** The argv of every structure a delivery starts: `[raw_body, query_params_json, headers_json]`. */
export const threeArgs = (p: DeliveryPayload) => [p.raw_body, JSON.stringify(p.query), JSON.stringify(p.headers)];

/**
 * A uuid v4 derived from the delivery and a label (`structure:<id>`): the id of the run a delivery starts for
 * a target, the same on every retry, so a retried start finds its run instead of starting a second one.
 */
export function derivedId(deliveryId: string, label: string): string {
  const b = createHash('sha256').update(`${deliveryId}:${label}`).digest();
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Deliveries of the last minute that were not refused for the rate itself (so a flood cannot lock out forever). */
export async function overRate(ds: DataSource, integrationId: string, perMinute: number): Promise<boolean> {
  const [{ n }]: Array<{ n: string }> = await ds.query(
    `SELECT count(*) AS n FROM (SELECT 1 FROM integration_deliveries
       WHERE integration_id = $1 AND received_at > now() - interval '60 seconds' AND verdict <> 'rate_limited'
       LIMIT $2) recent`,
    [integrationId, perMinute],
  );
  return Number(n) >= perMinute;
}

export interface DeliveryRecord {
  verdict: DeliveryVerdict;
  httpStatus: number;
  event?: string | null;
  deliveryKey?: string | null;
  /** Set on accepted deliveries with a sender's id: a second one with the same key violates the unique index. */
  dedupe?: boolean;
  status?: DeliveryStatus | null;
  message?: string;
  payload?: DeliveryPayload | null;
  deliveryId?: string;
}

export function newDelivery(integration: Integration, r: DeliveryRecord): IntegrationDelivery {
  const now = new Date();
  return {
    delivery_id: r.deliveryId ?? randomUUID(),
    integration_id: integration.integration_id,
    organization_id: integration.organization_id,
    received_at: now,
    verdict: r.verdict,
    http_status: r.httpStatus,
    event: r.event ?? null,
    delivery_key: r.deliveryKey ?? null,
    dedupe_key: r.dedupe ? (r.deliveryKey ?? null) : null,
    status: r.status ?? null,
    status_detail: r.message ? { message: r.message } : null,
    structure_run_ids: [],
    assistant_run_ids: [],
    deployment_ids: [],
    errors: [],
    payload: r.payload ?? null,
    updated_at: now,
    completed_at: null,
  };
}

export async function recordDelivery(
  db: DataSource | EntityManager,
  integration: Integration,
  r: DeliveryRecord,
): Promise<IntegrationDelivery> {
  const row = newDelivery(integration, r);
  await db.getRepository(IntegrationDelivery).insert(row as QueryDeepPartialEntity<IntegrationDelivery>);
  return row;
}

/** The first delivery with this sender's id (what a duplicate answers with). */
export const firstDelivery = (ds: DataSource, integrationId: string, key: string) =>
  ds.getRepository(IntegrationDelivery).findOneBy({ integration_id: integrationId, dedupe_key: key });

export async function listDeliveries(ds: DataSource, caller: Caller, integrationId: string, page: PageRequest) {
  const integration = await findIntegration(ds, caller, integrationId);
  return pageInOrg(
    ds,
    IntegrationDelivery,
    caller.organizationId,
    page,
    { integration_id: integration.integration_id },
    { received_at: 'DESC', delivery_id: 'DESC' },
  );
}

/**
 * Cancels the delivery's work and answers once its workflow recorded CANCELLED (the job kernel's cancelAndWait;
 * runs and deployments it started go on). 404 for a delivery not of this integration; 409 when it has no work
 * (a webhook delivery, a refused one) or its work already ended otherwise.
 */
export async function cancelDelivery(
  deps: { ds: DataSource; temporal: Client },
  caller: Caller,
  integrationId: string,
  deliveryId: string,
): Promise<IntegrationDelivery> {
  const integration = await findIntegration(deps.ds, caller, integrationId);
  const delivery = await findInOrg(
    deps.ds,
    IntegrationDelivery,
    caller.organizationId,
    { integration_id: integration.integration_id, delivery_id: deliveryId },
    'Delivery',
  );
  if (delivery.status === null) throw conflict(`This delivery has no work to cancel (verdict ${delivery.verdict})`);
  // A delivery with work keeps a status (the kernel's statuses never go back to none).
  type WithWork = IntegrationDelivery & { status: DeliveryStatus };
  return cancelAndWait(deps.temporal, INTEGRATION_DELIVERY, delivery as WithWork, {
    requestedBy: caller.actor,
    read: async () =>
      (await deps.ds.getRepository(IntegrationDelivery).findOneByOrFail({ delivery_id: deliveryId })) as WithWork,
  });
}

/**
 * Moves the delivery's work to `to` when that is forward from its status (the job kernel's guarded transition;
 * a terminal move sets completed_at and drops the kept request). True when it moved.
 */
export const transitionDelivery = async (
  db: DataSource | EntityManager,
  deliveryId: string,
  to: DeliveryStatus,
  detail?: Record<string, unknown>,
) => (await transition(db, INTEGRATION_DELIVERY, deliveryId, to, { status_detail: detail })) !== undefined;

/**
 * QUEUED → RUNNING, once the delivery's row committed (the job kernel's start); false when the delivery is
 * gone (its integration deleted, or its insert rolled back) or already ended.
 */
export const startDelivery = async (ds: DataSource, deliveryId: string) =>
  (await startJob(ds, INTEGRATION_DELIVERY, deliveryId)) === 'RUNNING';

/** Adds what a delivery started (ids appended once) and its per-target errors. */
export async function recordStarted(
  db: DataSource | EntityManager,
  deliveryId: string,
  started: { structure_run_ids?: string[]; assistant_run_ids?: string[]; deployment_ids?: string[] },
  errors: DeliveryError[] = [],
): Promise<void> {
  const merge = (col: string, i: number) =>
    `${col} = (SELECT COALESCE(jsonb_agg(DISTINCT v), '[]'::jsonb) FROM jsonb_array_elements_text(${col} || $${i}::jsonb) v)`;
  await db.query(
    `UPDATE integration_deliveries SET ${merge('structure_run_ids', 2)}, ${merge('assistant_run_ids', 3)},
       ${merge('deployment_ids', 4)}, updated_at = now(),
       errors = errors || COALESCE((SELECT jsonb_agg(e) FROM jsonb_array_elements($5::jsonb) e
                                    WHERE NOT integration_deliveries.errors @> jsonb_build_array(e)), '[]'::jsonb)
     WHERE delivery_id = $1`,
    [
      deliveryId,
      JSON.stringify(started.structure_run_ids ?? []),
      JSON.stringify(started.assistant_run_ids ?? []),
      JSON.stringify(started.deployment_ids ?? []),
      JSON.stringify(errors),
    ],
  );
}

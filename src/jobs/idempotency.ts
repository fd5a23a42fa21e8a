// Idempotency keys (docs/run-control.md#idempotency-keys), for every kind of run and job alike: a create that
// carries a key makes its record once per organization, operation, target and key while the key lives; a
// repeat gets the record the first one made. The key's row (idempotency_keys, primary key = that scope) is
// inserted first in the transaction that inserts the record (insertAndStart), so the two commit together: a
// concurrent repeat's insert waits on the unique index until the first commits (then it answers that record)
// or rolls back (then it makes the record itself). Nothing of a failed create keeps the key claimed.
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DataSource, EntityManager } from 'typeorm';
import { HttpError } from '../errors';
import type { ResourceKind, WorkflowResource } from '../temporal/workflow-start';
import { pendingClaims, type IdempotencyClaim } from '../persistence/pending-claim';
import { judgeHeldRecord } from './abandoned-create';

export type { IdempotencyClaim } from '../persistence/pending-claim';
export { takePendingClaim } from '../persistence/pending-claim';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** The record a key names. */
export interface IdempotentRecord {
  kind: ResourceKind;
  id: string;
}

/** JSON with the members of every object in name order: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const bodyHashOf = (request: unknown): string =>
  createHash('sha256').update(canonicalJson(request)).digest('hex');

/** The header's value, checked: 1–255 characters; anything else is a 400 naming the header. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (header.length < 1 || header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new HttpError(400, 'ValidationError', [
      {
        message: `/header/${IDEMPOTENCY_KEY_HEADER} must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${header.length}`,
        path: `/header/${IDEMPOTENCY_KEY_HEADER}`,
      },
    ]);
  }
  return header;
}

const keyReused = (key: string) =>
  new HttpError(422, 'IdempotencyKeyReusedError', [
    {
      message: `Idempotency-Key ${JSON.stringify(key)} was used with another request body; a repeat must send the same body (or use a new key)`,
      path: `/header/${IDEMPOTENCY_KEY_HEADER}`,
    },
  ]);

/** Thrown inside the create's transaction when another request holds the key; the transaction rolls back. */
class KeyTaken extends Error {}

/** A repeat, or the same key racing, makes the first record again at most this often before giving up. */
const MAX_ATTEMPTS = 3;

/**
 * Runs `create` once per key: when the key is held (unexpired) by a request with the same body hash, answers
 * `replay(record)` instead, with `replayed: true`; with another hash, a 422. `create` must make its record with
 * insertAndStart (exactly once), which claims the key in the record's transaction, and build its row with
 * `idempotency_key: pendingIdempotencyKey()` (newRunRow does). Used by the route builder
 * for every route with `idempotent`, and by anything that creates without HTTP (a schedule's fire).
 */
export async function createIdempotently<T>(
  ds: DataSource,
  claim: IdempotencyClaim,
  create: () => Promise<T>,
  replay: (record: IdempotentRecord) => Promise<T>,
  /** Judges whether a held record was abandoned before its workflow started (abandoned-create.ts). */
  temporal?: Client,
): Promise<{ value: T; replayed: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const held = await heldRecord(ds, claim);
    if (held && (!temporal || (await judgeHeldRecord(ds, temporal, claim, held)) === 'replay'))
      return { value: await replay(held), replayed: true };
    const pending = { claim, taken: false };
    try {
      const value = await pendingClaims.run(pending, create);
      if (!pending.taken) throw new Error(`${claim.operation} created nothing through insertAndStart: no key claimed`);
      return { value, replayed: false };
    } catch (err) {
      // Another request committed the key first: answer its record (read anew on the next turn).
      if (!(err instanceof KeyTaken) || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

/** The unexpired record of a key; a 422 when the key was used with another body. */
async function heldRecord(ds: DataSource, claim: IdempotencyClaim): Promise<IdempotentRecord | undefined> {
  const [row] = (await ds.query(
    `SELECT body_hash, record_kind, record_id FROM idempotency_keys
      WHERE organization_id = $1 AND operation = $2 AND target = $3 AND key = $4 AND expires_at > now()`,
    [claim.organizationId, claim.operation, claim.target, claim.key],
  )) as Array<{ body_hash: string; record_kind: ResourceKind; record_id: string }>;
  if (!row) return undefined;
  if (row.body_hash !== claim.bodyHash) throw keyReused(claim.key);
  return { kind: row.record_kind, id: row.record_id };
}

/**
 * In the record's transaction: claims the key (the first statement, so a concurrent repeat waits here holding
 * nothing else), then inserts the record (whose builder wrote the key on it: pendingIdempotencyKey). An expired row of the key is taken over; a
 * live one (committed by another request) throws KeyTaken.
 */
export async function insertClaimed<T>(
  em: EntityManager,
  claim: IdempotencyClaim,
  resource: WorkflowResource,
  insert: () => Promise<T>,
): Promise<T> {
  if (!(await claimRow(em, claim, resource))) throw new KeyTaken();
  return insert();
}

/**
 * For a route that adds to a record instead of creating one (a run's events): claims the key in the
 * transaction that adds, after that transaction locked the record (so repeats of one key are serialized by
 * the lock, not raced). Answers false for a repeat of the same body, which must then add nothing; a 422 for
 * the key used with another body.
 */
export async function claimAddition(
  em: EntityManager,
  claim: IdempotencyClaim,
  record: IdempotentRecord,
): Promise<boolean> {
  if (await claimRow(em, claim, record)) return true;
  const [row] = (await em.query(
    `SELECT body_hash FROM idempotency_keys
      WHERE organization_id = $1 AND operation = $2 AND target = $3 AND key = $4`,
    [claim.organizationId, claim.operation, claim.target, claim.key],
  )) as Array<{ body_hash: string }>;
  if (row && row.body_hash !== claim.bodyHash) throw keyReused(claim.key);
  return false;
}

/** Inserts the key's row naming `record`, or takes over an expired one; false when a live row holds it. */
async function claimRow(em: EntityManager, claim: IdempotencyClaim, record: IdempotentRecord): Promise<boolean> {
  const claimed = (await em.query(
    `INSERT INTO idempotency_keys
       (organization_id, operation, target, key, body_hash, record_kind, record_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))
     ON CONFLICT (organization_id, operation, target, key) DO UPDATE
       SET body_hash = EXCLUDED.body_hash, record_kind = EXCLUDED.record_kind, record_id = EXCLUDED.record_id,
           created_at = now(), expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= now()
     RETURNING 1`,
    [
      claim.organizationId,
      claim.operation,
      claim.target,
      claim.key,
      claim.bodyHash,
      record.kind,
      record.id,
      claim.ttlSeconds,
    ],
  )) as unknown[];
  return claimed.length > 0;
}

/** Frees the key of a record whose start failed (insertAndStart's undo), so a retry can create it. */
export async function releaseKeyOf(em: EntityManager, recordId: string): Promise<void> {
  await em.query(`DELETE FROM idempotency_keys WHERE record_id = $1`, [recordId]);
}

/** Deletes expired keys, at most `limit` (the reconciler, every minute); answers how many. */
export async function sweepExpiredKeys(ds: DataSource, limit = 10_000): Promise<number> {
  // TypeORM answers a DELETE with [rows, affected].
  const [, deleted] = (await ds.query(
    `DELETE FROM idempotency_keys WHERE ctid IN
       (SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)`,
    [limit],
  )) as [unknown[], number];
  return deleted;
}

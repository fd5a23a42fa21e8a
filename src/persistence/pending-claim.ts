// The idempotency claim of the create running in this async context (src/jobs/idempotency.ts), from
// createIdempotently until insertAndStart takes it. A leaf module, so that the builders of records (newRunRow,
// the job rows) can write the key on the row they build without importing the kernel.
import { AsyncLocalStorage } from 'node:async_hooks';

/** Who asks to create what, once: the scope of the key and the hash of the request. */
export interface IdempotencyClaim {
  organizationId: string;
  /** The create operation (the route's operationId, e.g. `CreateStructureRun`). */
  operation: string;
  /** What it creates under (the path's ids, e.g. the structure id). */
  target: string;
  key: string;
  /** sha256 of the request (bodyHashOf); the same key with another hash is refused. */
  bodyHash: string;
  ttlSeconds: number;
}

export const pendingClaims = new AsyncLocalStorage<{ claim: IdempotencyClaim; taken: boolean }>();

/** The key the record being built now is created with (its `idempotency_key`); null without one. */
export function pendingIdempotencyKey(): string | null {
  const pending = pendingClaims.getStore();
  return pending && !pending.taken ? pending.claim.key : null;
}

/** The claim of the create in this context, taken once (insertAndStart); undefined without one. */
export function takePendingClaim(): IdempotencyClaim | undefined {
  const pending = pendingClaims.getStore();
  if (!pending || pending.taken) return undefined;
  pending.taken = true;
  return pending.claim;
}

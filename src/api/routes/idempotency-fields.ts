// The `idempotency_key` of run and job records (docs/run-control.md#idempotency-keys): absent on records made
// without one, so the shapes existing clients parse are unchanged.
import type { JsonSchema } from '../schemas/registry';

export const idempotencyKeyField: JsonSchema = {
  type: 'string',
  description: 'The Idempotency-Key of the request that created this record; absent when it had none.',
};

export const presentIdempotencyKey = (record: { idempotency_key?: string | null }) =>
  record.idempotency_key ? { idempotency_key: record.idempotency_key } : {};

// Checks for user-supplied text and metadata that JSON Schema cannot express: PostgreSQL refuses NUL
// characters in text and jsonb (that would be a 500), and metadata objects are bounded by their size.
import { badRequest } from '../api/http/errors';

/** Largest `metadata` object, as JSON text. */
export const MAX_METADATA_BYTES = 65_536;

/** Refuses a string with a NUL character, naming where it is (`/body/messages/3/input`). */
export function checkText(value: string | null | undefined, path: string): void {
  if (typeof value === 'string' && value.includes('\u0000')) throw badRequest(`${path} must not contain NUL characters`, path);
}

/** Refuses metadata larger than MAX_METADATA_BYTES or holding a NUL character in a key or a string. */
export function checkMetadata(value: Record<string, unknown> | undefined, path: string): void {
  if (value === undefined) return;
  const json = JSON.stringify(value);
  if (Buffer.byteLength(json) > MAX_METADATA_BYTES) throw badRequest(`${path} must be at most ${MAX_METADATA_BYTES} bytes as JSON`, path);
  if (json.includes('\\u0000')) throw badRequest(`${path} must not contain NUL characters`, path);
}

/** The unique index a failed INSERT/UPDATE violated, or undefined for any other error. */
export function violatedUniqueIndex(err: unknown): string | undefined {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e?.code ?? e?.driverError?.code;
  if (code !== '23505') return undefined;
  return e.constraint ?? e.driverError?.constraint ?? '';
}

/** Rows of a raw `UPDATE/DELETE ... RETURNING` (TypeORM's PostgreSQL driver answers `[rows, affected]` for those). */
export function returnedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

// Checks for user-supplied records that JSON Schema cannot express: metadata objects are bounded by their
// size. (NUL characters, unpaired surrogates and nesting depth are refused for every request by the api's
// input guard, before this runs.)
import { badRequest, conflict } from '../errors';

/** Largest `metadata` object, as JSON text. */
export const MAX_METADATA_BYTES = 65_536;

/** Refuses metadata larger than MAX_METADATA_BYTES as JSON. */
export function checkMetadata(value: Record<string, unknown> | undefined, path: string): void {
  if (value === undefined) return;
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_METADATA_BYTES)
    throw badRequest(`${path} must be at most ${MAX_METADATA_BYTES} bytes as JSON`, path);
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
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number')
    return result[0] as T[];
  return result as T[];
}

/** Runs `work`; a taken alias (the unique index `index` violated) becomes a 409 that names it and the kind of record. */
export async function aliasGuard<T>(
  index: string,
  what: string,
  alias: string | null | undefined,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (violatedUniqueIndex(err) === index) {
      throw conflict(`The alias ${JSON.stringify(alias)} is already used by another ${what} of this organization`);
    }
    throw err;
  }
}

import { DataSource } from 'typeorm';
import { hashApiKey } from '../../security/api-key-values';
import type { Caller } from '../../services/caller';
import { unauthorized } from '../../errors';

/** How often `last_used` is written at most, per key: reads stay read-only in between. */
const LAST_USED_RESOLUTION_SECONDS = 60;

export async function authenticate(ds: DataSource, keyValue: string | undefined): Promise<Caller> {
  if (!keyValue) throw unauthorized();
  const rows: Array<{
    api_key_id: string;
    organization_id: string;
    user_id: string | null;
    run_id: string | null;
    stale: boolean;
  }> = await ds.query(
    `SELECT api_key_id, organization_id, user_id, run_id,
              last_used < now() - make_interval(secs => $2) AS stale
         FROM api_keys WHERE key_hash = $1 AND active`,
    [hashApiKey(keyValue), LAST_USED_RESOLUTION_SECONDS],
  );
  const key = rows[0];
  if (!key) throw unauthorized('The API key is unknown, inactive or deleted');
  if (key.stale) {
    // Fire and forget: a lost update only makes last_used a minute older.
    ds.query(`UPDATE api_keys SET last_used = now() WHERE api_key_id = $1`, [key.api_key_id]).catch(() => undefined);
  }
  return {
    organizationId: key.organization_id,
    userId: key.user_id,
    apiKeyId: key.api_key_id,
    actor: key.user_id ?? key.api_key_id,
    runId: key.run_id,
  };
}

/** Key from `Authorization: Bearer <key>`, or from `?api_key=` on routes that allow it (webhooks). */
export function extractKey(
  authorization: string | undefined,
  queryKey: unknown,
  allowQuery: boolean,
): string | undefined {
  if (authorization) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) throw unauthorized('Authorization header must be "Bearer <api key>"');
    return m[1];
  }
  if (allowQuery && typeof queryKey === 'string' && queryKey) return queryKey;
  return undefined;
}

import { DataSource } from 'typeorm';
import { hashApiKeyHex } from '../../security/api-key-values';
import type { Caller } from '../../services/caller';
import { unauthorized } from '../../errors';
import type { KeyCache } from './key-cache';
import type { Role } from '../../services/accounts/roles';

/** How often `last_used` is written at most, per key: reads stay read-only in between. */
const LAST_USED_RESOLUTION_SECONDS = 60;

/**
 * The caller of `keyValue`: from the process's key cache when it holds the key (no round trip), else from
 * `api_keys` (then cached). `last_used` is written at most once a minute per key and process, after the answer.
 */
export async function authenticate(ds: DataSource, keyValue: string | undefined, cache?: KeyCache): Promise<Caller> {
  if (!keyValue) throw unauthorized();
  const hashHex = hashApiKeyHex(keyValue);
  const now = Date.now();
  let key = cache?.get(hashHex);
  if (!key) {
    const generation = cache?.begin() ?? 0;
    const rows: Array<{
      api_key_id: string;
      organization_id: string;
      user_id: string | null;
      run_id: string | null;
      role: Role | null;
      stale: boolean;
    }> = await ds.query(
      // A user key acts with its user's role (a user key outlives no membership: removing one deletes them).
      `SELECT k.api_key_id, k.organization_id, k.user_id, k.run_id,
              CASE WHEN k.run_id IS NOT NULL THEN 'member' ELSE COALESCE(k.role, m.role) END AS role,
              k.last_used < now() - make_interval(secs => $2) AS stale
         FROM api_keys k
         LEFT JOIN memberships m ON m.organization_id = k.organization_id AND m.user_id = k.user_id
        WHERE k.key_hash = $1 AND k.active`,
      [Buffer.from(hashHex, 'hex'), LAST_USED_RESOLUTION_SECONDS],
    );
    const row = rows[0];
    if (!row || !row.role) throw unauthorized('The API key is unknown, inactive or deleted');
    key = {
      apiKeyId: row.api_key_id,
      organizationId: row.organization_id,
      userId: row.user_id,
      runId: row.run_id,
      role: row.role,
      lastUsedAt: row.stale ? 0 : now,
    };
    cache?.set(hashHex, key, generation);
  }
  if (now - key.lastUsedAt > LAST_USED_RESOLUTION_SECONDS * 1000) {
    key.lastUsedAt = now;
    // Fire and forget: a lost update only makes last_used a minute older.
    ds.query(`UPDATE api_keys SET last_used = now() WHERE api_key_id = $1`, [key.apiKeyId]).catch(() => undefined);
  }
  return {
    organizationId: key.organizationId,
    userId: key.userId,
    apiKeyId: key.apiKeyId,
    actor: key.userId ?? key.apiKeyId,
    runId: key.runId,
    role: key.role,
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

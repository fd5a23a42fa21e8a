// A bounded cache of authenticated API keys, so that a request costs no database round trip to authenticate.
// It is trusted only while the process's LISTEN connection is up: a key deactivated or deleted anywhere, or its
// user's role changed, notifies `api_key_changes` (triggers on `api_keys` and `memberships`), and the hub drops it here at once; while the
// connection is down, or was, every key is read from the database again. A read that raced with a change
// (any change since it began) is not cached.
import { LRUCache } from 'lru-cache';
import type { KeyChangeListener } from '../../persistence/run-updates-hub';
import type { Role } from '../../services/accounts/roles';

export interface CachedKey {
  apiKeyId: string;
  organizationId: string;
  userId: string | null;
  runId: string | null;
  role: Role;
  /** When this process last wrote the key's `last_used` (or read it as fresh), ms since the epoch. */
  lastUsedAt: number;
}

/** Keys kept per api process. */
const MAX_KEYS = 10_000;
/** A key is read again at least this often, whatever the notifications say. */
const TTL_MS = 5 * 60_000;

export class KeyCache implements KeyChangeListener {
  private readonly keys = new LRUCache<string, CachedKey>({ max: MAX_KEYS, ttl: TTL_MS });
  private generation = 0;

  constructor(private readonly trusted: () => boolean) {}

  get(hashHex: string): CachedKey | undefined {
    return this.trusted() ? this.keys.get(hashHex) : undefined;
  }

  /** The generation to pass to `set` of a read about to begin. */
  begin(): number {
    return this.generation;
  }

  /** Caches a key read from the database, unless anything changed since `begin()`. */
  set(hashHex: string, key: CachedKey, generation: number): void {
    if (generation === this.generation && this.trusted()) this.keys.set(hashHex, key);
  }

  changed(hashHex: string): void {
    this.generation++;
    this.keys.delete(hashHex);
  }

  reset(): void {
    this.generation++;
    this.keys.clear();
  }
}

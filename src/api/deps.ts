import type { Client } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../blobs/blob-store';
import type { Config } from '../config';
import type { Logger } from '../logger';
import type { SecretBox } from '../security/secret-box';
import type { RunUpdatesHub } from '../persistence/run-updates-hub';
import type { KeyCache } from './http/key-cache';
import type { DiskSpace } from '../observability/disk-space';
import type { RateLimiter } from './http/rate-limits';

/** Everything a request handler may use; built once per api process. */
export interface Deps {
  config: Config;
  ds: DataSource;
  temporal: Client;
  blobs: BlobStore;
  box: SecretBox;
  log: Logger;
  /**
   * This process's LISTEN connection for run updates (SSE fan-out). Without one (some tests build bare
   * apps), event streams still work, by their periodic re-check alone.
   */
  runUpdates?: RunUpdatesHub;
  /** Authenticated keys of this process (src/api/http/key-cache.ts); made by createApp when there is a hub. */
  keyCache?: KeyCache;
  /** Free space of the data and blob filesystems (admission, /ready); made by createApp from the config if absent. */
  disk?: DiskSpace;
  /** The token buckets of RATE_LIMITS (src/api/http/rate-limits.ts); made by createApp when the config has rules. */
  rateLimiter?: RateLimiter;
}

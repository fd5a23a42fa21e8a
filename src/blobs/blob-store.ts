import type { Readable } from 'node:stream';

/**
 * Where bytes live (bucket assets, code archives, build outputs). Keys are opaque `/`-separated strings
 * made by the platform, never by users. The filesystem store is the default; an S3-compatible store
 * implements the same interface.
 */
export interface BlobStore {
  /** Streams `body` to `key`, replacing it atomically. Rejects with BlobTooLargeError past `maxBytes`. */
  put(key: string, body: Readable, maxBytes: number): Promise<{ size: number }>;
  /** A read stream and size, or undefined when absent. */
  get(key: string): Promise<{ stream: Readable; size: number } | undefined>;
  delete(key: string): Promise<void>;
  /** Deletes every key under `prefix/`. */
  deletePrefix(prefix: string): Promise<void>;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
  }
}

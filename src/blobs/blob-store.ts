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
  /**
   * A URL of the store itself that allows `operation` on `key` until `expires` (unix seconds), for clients to
   * move bytes without the api. Absent (the filesystem store): the api's own presigned URLs serve the bytes.
   */
  presignedUrl?(key: string, operation: BlobOperation, expires: number): Promise<string>;
}

export type BlobOperation = 'GET' | 'PUT';

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Keys are platform-made (src/blobs/keys.ts); anything else is a bug, refused before it reaches a store. */
export function checkBlobKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`unsafe blob key ${JSON.stringify(key)}`);
  }
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`blob exceeds ${maxBytes} bytes`);
  }
}

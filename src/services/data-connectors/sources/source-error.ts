import type { SourceItemError } from './source';

/**
 * What a source's `read()` rejects with for one item (and `list()` yields as a `SourceItemError`): `type` is the
 * short name the job puts in `errors[]` (`TooLarge`, `Forbidden`, `NotFound`, `RateLimited`, `FetchFailed`,
 * `Unsupported`). Any other error thrown by `read()` is a `FetchFailed` of that item.
 */
export class SourceError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Thrown by `list()` when nothing can be listed (refused credentials, a refused refresh token, an unreachable
 * host): the job fails with this message. `type` is e.g. `Unauthorized`.
 */
export class SourceUnavailableError extends SourceError {}

export const itemError = (path: string, type: string, message: string): SourceItemError => ({
  error: true,
  type,
  message,
  path,
});

/** A `SourceItemError` of `err` for `path`: its own type when a `SourceError`, else `FetchFailed`. */
export function toItemError(path: string, err: unknown): SourceItemError {
  if (err instanceof SourceError) return itemError(path, err.type, err.message);
  return itemError(path, 'FetchFailed', err instanceof Error ? err.message : String(err));
}

export const tooLarge = (what: string, maxBytes: number) =>
  new SourceError('TooLarge', `${what} is larger than the limit of ${maxBytes} bytes; not read`);

/** A relative asset path segment from an outside name: no slashes, no dot segments, no control characters. */
export function safeSegment(name: string, fallback: string): string {
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f/\\]+/g, '_')
    .trim()
    .slice(0, 150);
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? fallback : cleaned;
}

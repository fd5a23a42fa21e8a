// Errors that say "PostgreSQL (or Temporal, or the disk) cannot take this right now", as opposed to a request
// or query that is wrong: the api answers them 503 with Retry-After so clients retry, and writes that must
// not be lost wait them out.

/** Out of resources, by PostgreSQL's SQLSTATE class 53 (insufficient resources) or the filesystem's errno. */
const OUT_OF_RESOURCES: Record<string, string> = {
  '53000': 'The database is out of resources',
  '53100': 'The database is out of disk space',
  '53200': 'The database is out of memory',
  '53300': 'The database has too many connections',
  '53400': 'The database reached a configured limit',
  ENOSPC: 'The blob store is out of disk space',
  EDQUOT: 'The blob store is over its disk quota',
};

/** Connection-level failures of PostgreSQL (refused, terminated, shutting down, starting) and of sockets. */
const CONNECTION_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08006',
];

/**
 * What an unavailability error says to a client (the message of its 503), or undefined for any other error.
 * Out-of-resources errors are named; every other one is "a backing service is unavailable".
 */
export function unavailableReason(err: unknown): string | undefined {
  if (!isUnavailable(err)) return undefined;
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === 'string' && Object.hasOwn(OUT_OF_RESOURCES, e.code))
      return `${OUT_OF_RESOURCES[e.code]}; retry shortly`;
    e = e.cause === e ? undefined : (e.cause as typeof e);
  }
  return 'A backing service is unavailable; retry shortly';
}

/**
 * True for connection-level failures of PostgreSQL and Temporal (gRPC), and for out-of-resources errors
 * (a full disk, too many connections): they pass without the request being any different.
 */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string | number; message?: string; cause?: unknown };
  if (typeof e?.code === 'string' && (CONNECTION_CODES.includes(e.code) || Object.hasOwn(OUT_OF_RESOURCES, e.code)))
    return true;
  if (e?.code === 14 /* gRPC UNAVAILABLE */ || e?.code === 4 /* DEADLINE_EXCEEDED */) return true;
  // TypeORM releases a transaction's connection when it errors (terminated by the server): the next query
  // of that transaction, or its COMMIT, then fails with one of these instead of the connection error.
  if (
    ['QueryRunnerAlreadyReleasedError', 'QueryRunnerProviderAlreadyReleasedError'].includes(
      (err as Error | undefined)?.name ?? '',
    )
  )
    return true;
  if (
    /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/i.test(
      e?.message ?? '',
    )
  )
    return true;
  return e?.cause !== undefined && e.cause !== err && isUnavailable(e.cause);
}

/**
 * Runs `fn`, and runs it again while it fails with an `isUnavailable` error (backoff from 200 ms to 5 s), for
 * at most `maxWaitMs`. Any other error, or the last one, is thrown. `fn` must be safe to repeat: a commit
 * whose answer was lost may have happened.
 */
export async function retryWhileUnavailable<T>(fn: () => Promise<T>, maxWaitMs = 10 * 60_000): Promise<T> {
  const giveUpAt = Date.now() + maxWaitMs;
  for (let delay = 200; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isUnavailable(err) || Date.now() + delay > giveUpAt) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

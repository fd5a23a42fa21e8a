// Errors that say "PostgreSQL (or Temporal) cannot be reached right now", as opposed to a request or query
// that is wrong: the api answers them 503 so clients retry, and writes that must not be lost wait them out.

/** True for connection-level failures of PostgreSQL (refused, terminated, shutting down) and Temporal (gRPC). */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string | number; message?: string; cause?: unknown };
  if (
    typeof e?.code === 'string' &&
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      '57P01',
      '57P02',
      '57P03',
      '08000',
      '08001',
      '08003',
      '08006',
    ].includes(e.code)
  )
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

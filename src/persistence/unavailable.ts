// Errors that say "PostgreSQL (or Temporal) cannot be reached right now", as opposed to a request or query
// that is wrong: the api answers them 503 so clients retry.

/** True for connection-level failures of PostgreSQL (refused, terminated, shutting down) and Temporal (gRPC). */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string | number; message?: string; cause?: unknown };
  if (typeof e?.code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006'].includes(e.code)) return true;
  if (e?.code === 14 /* gRPC UNAVAILABLE */ || e?.code === 4 /* DEADLINE_EXCEEDED */) return true;
  // TypeORM releases a transaction's connection when it errors (terminated by the server): the next query
  // of that transaction, often its COMMIT, then fails with this instead of the connection error.
  if ((err as Error | undefined)?.name === 'QueryRunnerAlreadyReleasedError') return true;
  if (/Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/i.test(e?.message ?? '')) return true;
  return e?.cause !== undefined && e.cause !== err && isUnavailable(e.cause);
}

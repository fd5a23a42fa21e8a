// Awaiting a state of a record: `waitFor` re-reads until a condition holds (bounded), woken by notifications
// where the process listens; `awaitEnd` waits for jobs of one kind to end, as an activity does for the runs it
// started (heartbeating while it waits, stopped by its cancellation) and as the api does for a function's run.
import type { DataSource } from 'typeorm';
import { runWakeUps, type RunUpdatesHub, type WakeUps } from '../persistence/run-updates-hub';
import type { JobKind, Row } from './kinds';

/** Without notifications: re-read after 20 ms, doubling up to this. */
const POLL_MAX_MS = 250;
/** With notifications: re-read on each, and this often anyway (a notification can be lost). */
const NOTIFIED_RECHECK_MS = 500;

export interface WaitOptions {
  /** Stops the wait: it then throws the signal's reason (an activity's cancellation). */
  signal?: AbortSignal;
  /** Called before each read (an activity's heartbeat). */
  heartbeat?: () => void;
}

/**
 * Reads `read` until `done` holds or `timeoutMs` passes; returns the last value. Used where the api answers
 * with a record once its workflow has recorded a state change (bounded wait). With `wakeUps` (the run
 * updates of this process's LISTEN connection) it re-reads when notified instead of polling.
 */
export async function waitFor<T>(
  read: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  wakeUps?: WakeUps,
  opts: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  let notified = false;
  let wake: (() => void) | undefined;
  const unsubscribe = wakeUps?.(() => {
    notified = true;
    wake?.();
  });
  const abort = () => wake?.();
  opts.signal?.addEventListener('abort', abort);
  const stopIfAborted = () => {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('The wait was cancelled');
  };
  try {
    for (;;) {
      stopIfAborted();
      opts.heartbeat?.();
      notified = false;
      const value = await read();
      if (done(value) || Date.now() >= deadline) return value;
      if (notified) continue; // changed while we read
      const pause = Math.min(wakeUps ? NOTIFIED_RECHECK_MS : delay, Math.max(0, deadline - Date.now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (opts.signal?.aborted) wake();
      });
      wake = undefined;
      delay = Math.min(delay * 2, POLL_MAX_MS);
    }
  } finally {
    opts.signal?.removeEventListener('abort', abort);
    unsubscribe?.();
  }
}

/** Wake-ups on any change of jobs `ids` of `kind`, where the process listens and the kind notifies (runs). */
export function jobWakeUps(hub: RunUpdatesHub | undefined, kind: JobKind, ids: string[]): WakeUps | undefined {
  if (!hub || !kind.notifyChannel) return undefined;
  return (wake) => {
    const offs = ids.map((id) => runWakeUps(hub, id)!(wake));
    return () => offs.forEach((off) => off());
  };
}

/** The rows of jobs `ids` of `kind` (every column), as the kernel reads them. */
export const readJobs = (ds: DataSource, kind: JobKind, ids: string[]): Promise<Row[]> =>
  ds.query(`SELECT * FROM ${kind.table} WHERE ${kind.idColumn} = ANY($1)`, [ids]);

/**
 * Waits until every job `ids` of `kind` ended (or `until` holds for it), re-reading on the notifications of
 * `hub` (runs) and polling otherwise; answers their last rows as `read` gives them (by default readJobs). A job
 * without a row counts as ended. Without `timeoutMs` it waits as long as its caller lives: an activity's
 * heartbeat timeout and cancellation bound it.
 */
export async function awaitEnd<T extends { status: string } = Row & { status: string }>(
  ds: DataSource,
  kind: JobKind,
  ids: string[],
  opts: WaitOptions & {
    hub?: RunUpdatesHub;
    timeoutMs?: number;
    until?: (job: T) => boolean;
    read?: () => Promise<T[]>;
  } = {},
): Promise<T[]> {
  const read = opts.read ?? (() => readJobs(ds, kind, ids) as Promise<T[]>);
  const ended = (job: T) => kind.terminal.includes(job.status) || (opts.until?.(job) ?? false);
  return waitFor(
    read,
    (jobs) => jobs.every(ended),
    opts.timeoutMs ?? Number.POSITIVE_INFINITY,
    jobWakeUps(opts.hub, kind, ids),
    opts,
  );
}

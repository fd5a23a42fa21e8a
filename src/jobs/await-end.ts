// Awaiting a state of a record: `waitFor` re-reads until a condition holds (bounded), woken by notifications
// where the process listens; `awaitEnd` waits for jobs of one kind to end, as an activity does for the runs it
// started (heartbeating, stopped by its cancellation).
import type { WakeUps } from '../persistence/run-updates-hub';

/** Without notifications: re-read after 20 ms, doubling up to this. */
const POLL_MAX_MS = 250;
/** With notifications: re-read on each, and this often anyway (a notification can be lost). */
const NOTIFIED_RECHECK_MS = 500;

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
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  let notified = false;
  let wake: (() => void) | undefined;
  const unsubscribe = wakeUps?.(() => {
    notified = true;
    wake?.();
  });
  try {
    for (;;) {
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
      });
      wake = undefined;
      delay = Math.min(delay * 2, POLL_MAX_MS);
    }
  } finally {
    unsubscribe?.();
  }
}

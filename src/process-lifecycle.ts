import type { Logger } from './logger';

/** Waits for SIGINT/SIGTERM, runs `shutdown` once, then exits. A second signal exits at once. */
export function runUntilSignal(log: Logger, shutdown: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      log.info({ signal }, 'shutting down');
      shutdown()
        .then(() => {
          log.info('stopped');
          resolve();
          process.exit(0);
        })
        .catch((err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

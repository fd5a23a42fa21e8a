// Restarting a crashed local dependency (PostgreSQL, the Temporal dev server) in place: the same data
// (`<DATA_DIR>/postgres`, `<DATA_DIR>/temporal.sqlite`) and the same port, while the api and the worker keep
// running and ride out the gap as they ride out any outage of theirs (503s, retried activities). Attempts
// are spaced by a doubling delay; an attempt fails when the start fails or the dependency exits again within
// STABLE_MS. After ATTEMPTS failed attempts in a row the supervisor gives up and stops everything, saying why.
// A dependency that stayed up STABLE_MS has recovered: its next crash starts a new series.
import { say, seconds, shout } from './output';

export interface RestartPolicy {
  /** Failed attempts in a row before giving up. */
  attempts: number;
  /** Delay before the first attempt; each further attempt of a series waits twice as long, up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** Up this long after a restart: recovered (the next crash starts a new series). */
  stableMs: number;
}

/** docs/getting-started.md describes it: 5 attempts, after 1, 2, 4, 8 and 16 s; recovered after 60 s up. */
export const RESTART_POLICY: RestartPolicy = { attempts: 5, firstDelayMs: 1000, maxDelayMs: 16_000, stableMs: 60_000 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Restarter {
  /** Failed attempts in the current series. */
  private failed = 0;
  private upSince = 0;
  private restarting = false;

  constructor(
    private readonly name: string,
    /** Starts the dependency again (same data, same port); resolves once it is ready, throws if it is not. */
    private readonly start: () => Promise<void>,
    private readonly hooks: { isStopping(): boolean; giveUp(reason: string): void },
    private readonly policy: RestartPolicy = RESTART_POLICY,
  ) {}

  /** The dependency exited without being asked to (`how`: "killed by SIGKILL", "exit code 1"). */
  crashed(how: string): void {
    if (this.restarting || this.hooks.isStopping()) return; // an attempt under way sees its own failure
    if (this.upSince && Date.now() - this.upSince < this.policy.stableMs)
      this.failed++; // the last restart did not hold
    else this.failed = 0;
    void this.restart(how);
  }

  private async restart(how: string): Promise<void> {
    this.restarting = true;
    let last = `it ${how}`;
    try {
      while (!this.hooks.isStopping()) {
        if (this.failed >= this.policy.attempts) {
          this.hooks.giveUp(
            `${this.name} ${how} and could not be restarted: ${this.policy.attempts} attempts in a row failed (last: ${last})`,
          );
          return;
        }
        const delay = Math.min(this.policy.firstDelayMs * 2 ** this.failed, this.policy.maxDelayMs);
        shout(
          `${this.name} ${how}: restarting it in place in ${seconds(delay)} (attempt ${this.failed + 1} of ${this.policy.attempts}); the api and the worker keep running`,
        );
        await sleep(delay);
        if (this.hooks.isStopping()) return;
        try {
          await this.start();
          this.upSince = Date.now();
          say(`${this.name} is back (attempt ${this.failed + 1})`);
          return;
        } catch (err) {
          last = (err instanceof Error ? err.message : String(err)).split('\n')[0];
          shout(`${this.name}: restart failed: ${last}`);
          this.failed++;
        }
      }
    } finally {
      this.restarting = false;
    }
  }
}

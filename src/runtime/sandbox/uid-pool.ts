// Run uids: every sandboxed process tree gets a uid of its own from a configured range, so that the
// kernel's per-uid accounting (RLIMIT_NPROC, signals, file ownership) is per run. A uid is leased through
// a lock file in a host-wide directory (every worker on the host shares it) holding the lessee's pid, and
// is handed out again only once no process of it is left: release() kills whatever still runs as it.
import fs from 'node:fs';
import path from 'node:path';
import { processExists, ProcessSweeper } from './processes';

/**
 * How long the /proc check of a uid whose control group held every process of it (and was emptied and
 * removed) may wait to share one read of /proc with the other releases: a read costs the worker a few ms of
 * CPU on a host of a few hundred processes; at 100 runs ending per second, one read per 5 s instead of two
 * per second. The uid stays leased until the check, so it is never handed out before it.
 */
const EMPTIED_GROUP_CHECK_MS = 5_000;

export interface UidLease {
  uid: number;
  /**
   * Kills every process still running as the uid, then frees it. Idempotent. `groupEmptied`: every process
   * of the uid was in a control group that is now empty and gone; the check may wait for a batch.
   */
  release(opts?: { groupEmptied?: boolean }): Promise<void>;
}

export class UidPool {
  private readonly dir: string;
  private readonly sweeper: ProcessSweeper;

  constructor(
    stateDir: string,
    private readonly base: number,
    private readonly count: number,
    /** Processes of a uid found outside its emptied control group (they are killed): a hole in the group. */
    onStray?: (uid: number, pids: number[]) => void,
  ) {
    this.sweeper = new ProcessSweeper({ onStray });
    this.dir = path.join(stateDir, 'uids');
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Leases a free uid; throws when every uid of the range is taken. */
  async lease(): Promise<UidLease> {
    // Uids of ended runs waiting for their batched check count as taken: a full range checks them now, once.
    for (let round = 0; round < 2; round++) {
      if (round) await this.sweeper.flush();
      const start = Math.floor(Math.random() * this.count);
      for (let i = 0; i < this.count; i++) {
        const uid = this.base + ((start + i) % this.count);
        if (await this.tryTake(uid)) return this.leaseOf(uid);
      }
    }
    throw new Error(`every sandbox uid of [${this.base}, ${this.base + this.count}) is in use (SANDBOX_UID_COUNT)`);
  }

  /** Frees now the uids whose check waits for its batch (the worker stops: no lease is left behind it). */
  flush(): Promise<void> {
    return this.sweeper.flush();
  }

  /** Whether a live process holds `uid` (its lock file names one). */
  isLeased(uid: number): boolean {
    try {
      const owner = Number(fs.readFileSync(this.lockFile(uid), 'utf8').trim());
      return !Number.isInteger(owner) || owner <= 0 || processExists(owner);
    } catch {
      return false;
    }
  }

  private lockFile(uid: number) {
    return path.join(this.dir, String(uid));
  }

  private async tryTake(uid: number): Promise<boolean> {
    const file = this.lockFile(uid);
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // Taken: reclaim it only when its lessee is gone (a worker that crashed), after killing what it left.
    const owner = Number(fs.readFileSync(file, 'utf8').trim());
    if (Number.isInteger(owner) && owner > 0 && processExists(owner)) return false;
    await this.sweeper.kill(uid);
    try {
      fs.unlinkSync(file);
      fs.writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return true;
    } catch {
      return false; // another worker reclaimed it first
    }
  }

  private leaseOf(uid: number): UidLease {
    let released: Promise<void> | undefined;
    return {
      uid,
      release: (opts = {}) =>
        (released ??= (async () => {
          await this.sweeper.kill(uid, opts.groupEmptied ? { batchMs: EMPTIED_GROUP_CHECK_MS } : {});
          fs.rmSync(this.lockFile(uid), { force: true });
        })()),
    };
  }
}

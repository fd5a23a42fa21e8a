// Run uids: every sandboxed process tree gets a uid of its own from a configured range, so that the
// kernel's per-uid accounting (RLIMIT_NPROC, signals, file ownership) is per run. A uid is leased through
// a lock file in a host-wide directory (every worker on the host shares it) naming the lessee (its pid and
// start time), and is handed out again only once no process of it is left: release() kills whatever still
// runs as it. A lock whose lessee died (a worker that crashed) is reclaimed by one worker at a time, under a
// host mutex, so that two workers never both take its uid.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { tryHostMutex } from './host-mutex';
import { processExists, ProcessSweeper } from './processes';

/**
 * How long the /proc check of a uid whose control group held every process of it (and was emptied and
 * removed) may wait to share one read of /proc with the other releases: a read costs the worker a few ms of
 * CPU on a host of a few hundred processes; at 100 runs ending per second, one read per 5 s instead of two
 * per second. The uid stays leased until the check, so it is never handed out before it.
 */
const EMPTIED_GROUP_CHECK_MS = 5_000;

/** A lock whose content cannot be read as a lessee is taken for a live one this long (a lock of an older worker). */
const UNREADABLE_LOCK_GRACE_MS = 60_000;

/** Who holds a uid's lock file: nobody (no file), a live process, or a process that is gone. */
type Lessee = 'none' | 'live' | 'dead';

/** A process's start time (clock ticks after boot, /proc/<pid>/stat field 22): with the pid, it names one process. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The lessee a lock file names: `<pid> <start time>` (older workers wrote the pid alone). */
function lesseeOf(file: string): Lessee {
  let content: string;
  try {
    content = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'none';
    throw err;
  }
  const [pidText, startTime] = content.split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) {
    const age = Date.now() - fs.statSync(file, { throwIfNoEntry: false })!.mtimeMs;
    return age > UNREADABLE_LOCK_GRACE_MS ? 'dead' : 'live';
  }
  if (!processExists(pid)) return 'dead';
  // A pid the kernel gave to another process since: the lessee is gone.
  return startTime === undefined || startTimeOf(pid) === startTime ? 'live' : 'dead';
}

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
  /** This process, as its locks name it. */
  private readonly stamp = `${process.pid} ${startTimeOf(process.pid) ?? ''}`.trim();
  /** The lock directory's part of the reclaim mutexes' names (tests run pools of their own directories). */
  private readonly mutexPrefix: string;

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
    const dirKey = createHash('sha256').update(fs.realpathSync(this.dir)).digest('hex').slice(0, 16);
    this.mutexPrefix = `tarmac-uid-reclaim:${dirKey}`;
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
      return lesseeOf(this.lockFile(uid)) === 'live';
    } catch {
      return true; // unreadable for another reason than its absence: not ours to judge free
    }
  }

  private lockFile(uid: number) {
    return path.join(this.dir, String(uid));
  }

  private async tryTake(uid: number): Promise<boolean> {
    const file = this.lockFile(uid);
    if (this.create(file)) return true;
    // Taken: reclaim it only when its lessee is gone (a worker that crashed), after killing what it left.
    return lesseeOf(file) === 'dead' && this.reclaim(uid, 'take');
  }

  /**
   * Frees the uids whose lessee is gone (workers killed), with one read of /proc for all of them: otherwise
   * each costs a read of its own when a lease meets it. Lock files half-written by a killed worker go too.
   * Answers how many uids were freed.
   */
  async reclaimGone(): Promise<number> {
    const names = fs.readdirSync(this.dir);
    for (const name of names.filter((n) => n.endsWith('.tmp'))) {
      const file = path.join(this.dir, name);
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > UNREADABLE_LOCK_GRACE_MS) fs.rmSync(file, { force: true });
    }
    const gone = names.filter((n) => /^\d+$/.test(n) && lesseeOf(path.join(this.dir, n)) === 'dead');
    const freed = await Promise.all(gone.map((n) => this.reclaim(Number(n), 'free')));
    return freed.filter(Boolean).length;
  }

  /**
   * Kills what a dead lessee left of `uid`, then takes the uid or frees it. Two workers may find the same dead
   * lessee: they reclaim one at a time, under a host mutex, and the second sees what the first did.
   */
  private async reclaim(uid: number, then: 'take' | 'free'): Promise<boolean> {
    const file = this.lockFile(uid);
    const unlock = await tryHostMutex(`${this.mutexPrefix}:${uid}`);
    if (!unlock) return false; // another worker reclaims it now
    try {
      const lessee = lesseeOf(file);
      if (lessee === 'none') return then === 'take' && this.create(file);
      if (lessee === 'live') return false;
      await this.sweeper.kill(uid);
      if (then === 'take') this.write(file, (tmp) => fs.renameSync(tmp, file));
      else fs.rmSync(file, { force: true });
      return true;
    } finally {
      await unlock();
    }
  }

  /** Creates the lock file with this process as its lessee, whole or not at all; false when it exists. */
  private create(file: string): boolean {
    try {
      this.write(file, (tmp) => fs.linkSync(tmp, file));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  /** Writes this process's stamp to a file of its own, then `place`s it as `file` (never read half-written). */
  private write(file: string, place: (tmp: string) => void): void {
    const tmp = `${file}.${randomUUID()}.tmp`;
    try {
      fs.writeFileSync(tmp, this.stamp, { flag: 'wx', mode: 0o600 });
      place(tmp);
    } finally {
      fs.rmSync(tmp, { force: true });
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

// Processes by uid, read from /proc: the sweep that makes sure nothing of a run outlives it.
import fs from 'node:fs';
import { KILLED_GONE_WITHIN_MS } from './cgroup-fs';

/** How many /proc/<pid>/status files are read between two turns of the event loop. */
const READS_PER_TURN = 32;
const UID_LINE = Buffer.from('\nUid:\t');
const STATE_ZOMBIE = Buffer.from('\nState:\tZ');

/**
 * The real uid of `pid` from its `status` (the owner of `/proc/<pid>` is no guide: a process can make it
 * root, PR_SET_DUMPABLE 0), or undefined when it is gone or a zombie (a zombie runs nothing and goes when
 * its parent reaps it: it does not hold the uid). One open, one read, one close into `buf`, no string made.
 */
function realUidOf(pid: string, buf: Buffer): number | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(`/proc/${pid}/status`, 'r');
    const size = fs.readSync(fd, buf, 0, buf.length, 0);
    const line = buf.indexOf(UID_LINE);
    if (line < 0 || line >= size) return undefined;
    const zombie = buf.indexOf(STATE_ZOMBIE);
    if (zombie >= 0 && zombie < line) return undefined;
    let uid = 0;
    for (let i = line + UID_LINE.length; i < size && buf[i] >= 0x30 && buf[i] <= 0x39; i++)
      uid = uid * 10 + buf[i] - 0x30;
    return uid;
  } catch {
    return undefined; // exited meanwhile
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The processes whose real uid is one of `uids`, by uid; one read of /proc serves every uid asked about.
 * Each status is read synchronously, a few at a time with a turn of the event loop between them: a read
 * of /proc/<pid>/status is a few microseconds of the kernel's, and the thread pool's round trip per file
 * (open, fstat, read, close as four tasks, and their promises) cost three to four times the reads
 * themselves (7-10 ms of CPU per read of /proc against 2.5 ms, 84 processes).
 */
export async function processesOfUids(uids: ReadonlySet<number>): Promise<Map<number, number[]>> {
  const entries = (await fs.promises.readdir('/proc')).filter((e) => /^\d+$/.test(e));
  const found = new Map<number, number[]>();
  const buf = Buffer.allocUnsafe(4096); // the Uid line is within the first kilobyte
  for (let start = 0; start < entries.length; start += READS_PER_TURN) {
    if (start) await new Promise((resolve) => setImmediate(resolve));
    for (const entry of entries.slice(start, start + READS_PER_TURN)) {
      const uid = realUidOf(entry, buf);
      if (uid === undefined || !uids.has(uid)) continue;
      const pids = found.get(uid);
      if (pids) pids.push(Number(entry));
      else found.set(uid, [Number(entry)]);
    }
  }
  return found;
}

export interface SweepOptions {
  /**
   * How long the check may wait to share a read of /proc with others (ms). For a uid whose every process was
   * in a control group that has been emptied and removed: the read only confirms that none is left outside
   * it, and whatever it finds is a stray (reported, then killed the same way).
   */
  batchMs?: number;
}

interface Waiting {
  due: number;
  deadline: number;
  expectEmpty: boolean;
  done: Array<(err?: Error) => void>;
}

/**
 * Kills every process of the uids given to `kill` until none is left (a fork race may need a few rounds).
 * One read of /proc serves every uid waiting, and reads start at most every `intervalMs` (unless the last
 * one killed something), or later when every uid waiting may wait (`batchMs`): under load one read serves
 * many ended runs instead of one each.
 */
export class ProcessSweeper {
  private readonly waiting = new Map<number, Waiting>();
  private running = false;
  private lastRead = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly opts: {
      timeoutMs?: number;
      intervalMs?: number;
      /** Processes found of a uid that was expected empty (`batchMs`), before they are killed. */
      onStray?: (uid: number, pids: number[]) => void;
    } = {},
  ) {}

  /** Resolves once no process of `uid` is left; rejects when some survive SIGKILL for the timeout (KILLED_GONE_WITHIN_MS). */
  kill(uid: number, opts: SweepOptions = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      const now = Date.now();
      const due = now + (opts.batchMs ?? 0);
      const entry = this.waiting.get(uid);
      const done = (err?: Error) => (err ? reject(err) : resolve());
      if (entry) {
        entry.done.push(done);
        entry.due = Math.min(entry.due, due);
        entry.expectEmpty &&= opts.batchMs !== undefined;
      } else {
        this.waiting.set(uid, {
          due,
          deadline: Number.MAX_SAFE_INTEGER,
          expectEmpty: opts.batchMs !== undefined,
          done: [done],
        });
      }
      if (!this.running) void this.sweep();
      else this.wake?.(); // a sleeping sweep looks again at when its next read is due
    });
  }

  /** Reads /proc now for every uid waiting for its batch (the worker stops): resolves once each is settled. */
  flush(): Promise<void> {
    const settled = [...this.waiting.values()].map((entry) => {
      entry.due = Math.min(entry.due, Date.now());
      return new Promise<void>((resolve) => entry.done.push(() => resolve()));
    });
    this.wake?.();
    return Promise.all(settled).then(() => undefined);
  }

  private async sweep(): Promise<void> {
    this.running = true;
    let killed = false;
    try {
      while (this.waiting.size) {
        // A round that killed something is checked again soon; otherwise the next read waits its turn, and
        // until the first uid waiting is due.
        const earliest = Math.min(...[...this.waiting.values()].map((w) => w.due));
        const next = Math.max(earliest, this.lastRead + (killed ? 20 : (this.opts.intervalMs ?? 500)));
        if (next > Date.now()) {
          await this.sleepUntil(next);
          continue;
        }
        this.lastRead = Date.now();
        killed = false;
        const uids = new Set(this.waiting.keys());
        let found: Map<number, number[]>;
        try {
          found = await processesOfUids(uids);
        } catch (err) {
          this.settle(uids, err as Error);
          continue;
        }
        for (const uid of uids) {
          const pids = found.get(uid);
          if (!pids) {
            this.settle([uid]);
            continue;
          }
          const entry = this.waiting.get(uid)!;
          if (entry.expectEmpty) this.opts.onStray?.(uid, pids);
          entry.expectEmpty = false;
          if (entry.deadline === Number.MAX_SAFE_INTEGER)
            entry.deadline = Date.now() + (this.opts.timeoutMs ?? KILLED_GONE_WITHIN_MS);
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // gone
            }
          }
          killed = true;
          if (Date.now() > entry.deadline)
            this.settle([uid], new Error(`processes of sandbox uid ${uid} survive SIGKILL: ${pids.join(', ')}`));
        }
      }
    } finally {
      this.running = false;
    }
  }

  private sleepUntil(time: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), time - Date.now());
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private settle(uids: Iterable<number>, err?: Error): void {
    for (const uid of uids) {
      const entry = this.waiting.get(uid);
      this.waiting.delete(uid);
      for (const done of entry?.done ?? []) done(err);
    }
  }
}

/** Whether a process with this pid exists (whoever owns it). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

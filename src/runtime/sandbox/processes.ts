// Processes by uid, read from /proc: the sweep that makes sure nothing of a run outlives it.
import fs from 'node:fs';

/**
 * The processes whose real uid is one of `uids`, by uid. Asynchronous, so the worker's event loop goes on
 * while /proc is read, and one read of /proc serves every uid asked about: this runs at the end of every
 * run, and a host may have thousands of processes. Each `status` is read: the owner of `/proc/<pid>` is no
 * guide, a process can make it root (PR_SET_DUMPABLE 0).
 */
export async function processesOfUids(uids: ReadonlySet<number>): Promise<Map<number, number[]>> {
  const entries = (await fs.promises.readdir('/proc')).filter((e) => /^\d+$/.test(e));
  const found = new Map<number, number[]>();
  await Promise.all(
    entries.map((entry) =>
      fs.promises.readFile(`/proc/${entry}/status`, 'latin1').then(
        (status) => {
          const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
          // A zombie runs nothing and goes when its parent reaps it: it does not hold the uid.
          if (!uids.has(uid) || /^State:\s+Z/m.test(status)) return;
          found.set(uid, [...(found.get(uid) ?? []), Number(entry)]);
        },
        () => undefined, // exited meanwhile
      ),
    ),
  );
  return found;
}

/**
 * Kills every process of the uids given to `kill` until none is left (a fork race may need a few rounds).
 * One read of /proc serves every uid waiting, and reads start at most every `intervalMs` (unless the last
 * one killed something): under load one read serves many ended runs instead of one each. A read of /proc
 * costs the worker 10-20 ms of CPU on a host with a few hundred processes.
 */
export class ProcessSweeper {
  private readonly waiting = new Map<number, { deadline: number; done: Array<(err?: Error) => void> }>();
  private running = false;
  private lastRead = 0;

  constructor(
    private readonly timeoutMs = 5_000,
    private readonly intervalMs = 500,
  ) {}

  /** Resolves once no process of `uid` is left; rejects when some survive SIGKILL for `timeoutMs`. */
  kill(uid: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = this.waiting.get(uid) ?? { deadline: Date.now() + this.timeoutMs, done: [] };
      entry.done.push((err) => (err ? reject(err) : resolve()));
      this.waiting.set(uid, entry);
      if (!this.running) void this.sweep();
    });
  }

  private async sweep(): Promise<void> {
    this.running = true;
    let killed = false;
    try {
      while (this.waiting.size) {
        // A round that killed something is checked again soon; otherwise the next read waits its turn.
        const wait = this.lastRead + (killed ? 20 : this.intervalMs) - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
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
          for (const pid of pids) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // gone
            }
          }
          killed = true;
          if (Date.now() > this.waiting.get(uid)!.deadline)
            this.settle([uid], new Error(`processes of sandbox uid ${uid} survive SIGKILL: ${pids.join(', ')}`));
        }
      }
    } finally {
      this.running = false;
    }
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

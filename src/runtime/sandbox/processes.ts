// Processes by uid, read from /proc: the sweep that makes sure nothing of a run outlives it.
import fs from 'node:fs';

/** Pids of the processes whose real uid is `uid`. */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = fs.readFileSync(`/proc/${entry}/status`, 'latin1');
      const m = /^Uid:\s+(\d+)/m.exec(status);
      // A zombie runs nothing and goes when its parent reaps it: it does not hold the uid.
      if (m && Number(m[1]) === uid && !/^State:\s+Z/m.test(status)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** SIGKILLs every process of `uid` until none is left (a fork race may need a few rounds). */
export async function killProcessesOf(uid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = processesOf(uid);
    if (!pids.length) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    if (Date.now() > deadline) throw new Error(`processes of sandbox uid ${uid} survive SIGKILL: ${pids.join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
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

// Processes by uid, read from /proc: the sweep that makes sure nothing of a run outlives it.
import fs from 'node:fs';

/**
 * Pids of the processes whose real uid is `uid`. Asynchronous, so the worker's event loop goes on while
 * /proc is read (this runs at the end of every run, and a host may have thousands of processes). Each
 * `status` is read: the owner of `/proc/<pid>` is no guide, a process can make it root (PR_SET_DUMPABLE 0).
 */
export async function processesOf(uid: number): Promise<number[]> {
  const entries = (await fs.promises.readdir('/proc')).filter((e) => /^\d+$/.test(e));
  const held = await Promise.all(
    entries.map((entry) =>
      fs.promises.readFile(`/proc/${entry}/status`, 'latin1').then(
        (status) => {
          const m = /^Uid:\s+(\d+)/m.exec(status);
          // A zombie runs nothing and goes when its parent reaps it: it does not hold the uid.
          return Boolean(m && Number(m[1]) === uid && !/^State:\s+Z/m.test(status));
        },
        () => false, // exited meanwhile
      ),
    ),
  );
  return entries.filter((_, i) => held[i]).map(Number);
}

/** SIGKILLs every process of `uid` until none is left (a fork race may need a few rounds). */
export async function killProcessesOf(uid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = await processesOf(uid);
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

// The control-group file system as cgroups.ts uses it (v1 and v2): the mounts, a process's groups, reading
// counters and peaks, writing limits, killing a group's processes and removing its directory.
import fs from 'node:fs';
import path from 'node:path';

export class CgroupUnavailable extends Error {}

/** Where our own tree sits under a group: a process already in it (started by `npm start`) is not nested again. */
export const PLATFORM_SUFFIX = /\/tarmac\/platform$/;

export interface Mount {
  type: 'cgroup' | 'cgroup2';
  root: string;
  point: string;
  options: string[];
}

export function mounts(): Mount[] {
  const found: Mount[] = [];
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [left, right] = line.split(' - ');
    if (!right) continue;
    const [type, , superOptions] = right.split(' ');
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    const fields = left.split(' ');
    // A mount hidden by a later one on or above it is listed still: only a visible hierarchy counts.
    if (fs.existsSync(path.join(fields[4], 'cgroup.procs')))
      found.push({ type, root: fields[3], point: fields[4], options: superOptions.split(',') });
  }
  return found;
}

/** This process's group in each hierarchy: '' for v2, else the controller names (`cpu,cpuacct`). */
export function ownGroups(pid: number | 'self' = 'self'): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m) for (const name of m[1] === '' ? [''] : m[1].split(',')) groups.set(name, m[2]);
  }
  return groups;
}

/** The directory of a group path of the mount (the mount's root may be a sub-path in a container). */
export function dirOf(mount: Mount, group: string): string {
  const relative = mount.root !== '/' && group.startsWith(mount.root) ? group.slice(mount.root.length) : group;
  return path.join(mount.point, relative.replace(PLATFORM_SUFFIX, ''));
}

export const write = (file: string, value: string | number) => fs.writeFileSync(file, String(value));
export const read = (file: string) => fs.readFileSync(file, 'utf8');
export const exists = (file: string) => fs.existsSync(file);

/** `key N` lines of memory.events, pids.events, memory.oom_control. */
export function counter(file: string, key: string): number {
  try {
    return Number(new RegExp(`^${key ? `${key} ` : ''}(\\d+)$`, 'm').exec(read(file))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

export function peak(file: string): number | undefined {
  try {
    return Number(read(file));
  } catch {
    return undefined; // an older kernel (v2 memory.peak is 5.19+), or the group is gone
  }
}

/**
 * A group removed meanwhile (by its run's release, or another worker's sweep of the same tree): ENOENT once it
 * is gone, ENODEV when its file was opened just before.
 */
export const groupGone = (err: unknown) => ['ENOENT', 'ENODEV'].includes((err as NodeJS.ErrnoException).code ?? '');

export function killAll(pids: number[]) {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A run's groups are made and removed off the event loop (the libuv thread pool): mkdir and rmdir of a
// group take the kernel's cgroup mutex and, in v1, wait for the memory controller to let go of the group,
// which under 100 runs in flight held the worker's loop for a quarter of its busy time. The tree itself is
// made once, at start, with the synchronous forms.

/**
 * How long processes sent SIGKILL may take to be gone before that counts as a failure. Usually milliseconds;
 * on a host at load 50-130 (CI saw it) a killed process tearing down its memory took more than 5 s, and a
 * build failed "processes of sandbox uid survive SIGKILL" while they were still exiting.
 */
export const KILLED_GONE_WITHIN_MS = 30_000;

/** The first and the longest wait between two tries of a group's removal (or two reads of its freezer's state). */
const RETRY_FIRST_MS = 5;
const RETRY_LONGEST_MS = 160;

/**
 * rmdir, retried while the kernel still counts processes that are dying; gives up after `timeoutMs`. The wait
 * between tries doubles: under load, killed processes (a run's pasta, killed as its launcher ends) take hundreds of
 * milliseconds to be gone, and at 100 runs in flight a try every 20 ms was ~11 % of the worker's CPU (each an
 * error, a read and a kill; bench/RESULTS.md, `worker-gc`).
 */
export async function removeDir(dir: string, timeoutMs = KILLED_GONE_WITHIN_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = RETRY_FIRST_MS; ; wait = Math.min(wait * 2, RETRY_LONGEST_MS)) {
    try {
      await fs.promises.rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || Date.now() > deadline) throw err;
      killAll(await pidsInRun(dir));
      await sleep(wait);
    }
  }
}

/** rmdir of an organization's group once its last run is gone; still in use (another run): left. */
export async function removeIfUnused(dir: string): Promise<void> {
  await fs.promises.rmdir(dir).catch(() => undefined); // busy or gone
}

/** mkdir -p that tolerates a racing rmdir of an emptied parent (another run of the organization ending). */
export function makeDir(dir: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
    }
  }
}

/** makeDir off the event loop (a run's groups). */
export async function makeRunDir(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.promises.mkdir(dir, { recursive: true });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
    }
  }
}

/** write off the event loop (a run's limits). */
export const writeRunFile = (file: string, value: string | number) => fs.promises.writeFile(file, String(value));

/** exists off the event loop: a stat of a group's file waits for the same kernel lock as a mkdir. */
export const existsRunFile = (file: string) =>
  fs.promises.access(file).then(
    () => true,
    () => false,
  );

/** The processes of a group, read off the event loop ([] once the group is gone). */
export async function pidsInRun(dir: string): Promise<number[]> {
  try {
    return (await fs.promises.readFile(path.join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean).map(Number);
  } catch (err) {
    if (groupGone(err)) return [];
    throw err;
  }
}

/** Writes what must hold, and reports the first write that failed as CgroupUnavailable (after `undo`). */
export function attempt<T>(what: string, fn: () => T, undo?: () => void): T {
  try {
    return fn();
  } catch (err) {
    undo?.();
    if (err instanceof CgroupUnavailable) throw err;
    throw new CgroupUnavailable(`${what}: ${(err as Error).message}`);
  }
}

/** `attempt` of asynchronous writes (a run's groups). */
export async function attemptRun(what: string, fn: () => Promise<void>, undo: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    await undo();
    if (err instanceof CgroupUnavailable) throw err;
    throw new CgroupUnavailable(`${what}: ${(err as Error).message}`);
  }
}

/**
 * Freezes the group (no fork can race the kill), kills every process of it, thaws it so they die. Off the event
 * loop: a v1 freezer's state is FREEZING until its dying processes are gone, read again and again meanwhile.
 */
export async function freezeAndKill(
  stateFile: string,
  frozen: string,
  thawed: string,
  pids: () => Promise<number[]>,
): Promise<void> {
  await writeRunFile(stateFile, frozen);
  try {
    const deadline = Date.now() + 2_000;
    // v1 passes through FREEZING; a frozen v2 group says so in cgroup.events. Killing during the
    // transition is still safe: whatever forks meanwhile is found by removeDir's retries.
    for (let wait = RETRY_FIRST_MS; stateFile.endsWith('freezer.state') && Date.now() < deadline;) {
      if ((await fs.promises.readFile(stateFile, 'utf8')).trim() === 'FROZEN') break;
      await sleep(wait);
      wait = Math.min(wait * 2, RETRY_LONGEST_MS);
    }
    killAll(await pids());
  } finally {
    await writeRunFile(stateFile, thawed);
  }
}

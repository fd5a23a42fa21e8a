// A per-run bound on the host's file table. RLIMIT_NOFILE bounds each process, and pids.max the processes and
// threads, so one run could hold their product (256 × 4096 ≈ 1 M files, 40 % of a 24 GB host's fs.file-max) and
// a few runs the whole table; no kernel limit counts a group's open files. So the run's group is watched: every
// WATCH_EVERY_MS the open descriptors of its processes (the group's cgroup.procs, each /proc/<pid>/fd) are
// counted, and a run holding more than SANDBOX_MAX_RUN_OPEN_FILES has every process killed, its limit counted
// as a hit (the run ends ERROR OpenFilesLimitExceeded, limits.ts). Between two counts a run opens only what its
// CPU share allows in WATCH_EVERY_MS. The default follows from the host (docs/security.md): half of fs.file-max
// shared by every run the worker may execute at once (WORKER_ACTIVITY_SLOTS).
import fs from 'node:fs';
import type { RunGroup } from './cgroups';

/** How often a run's open files are counted. */
export const WATCH_EVERY_MS = 250;

/** The share of the host's file table that all the runs of one worker may hold together. */
export const HOST_FILE_TABLE_SHARE = 0.5;

/** The host's file table size (fs.file-max), or undefined where it cannot be read. */
export function hostFileMax(): number | undefined {
  try {
    const n = Number(fs.readFileSync('/proc/sys/fs/file-max', 'utf8').trim());
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The default per-run bound: HOST_FILE_TABLE_SHARE of `fileMax` over `runsAtOnce`, at least 1,024 and at most 1 M. */
export function defaultRunOpenFiles(fileMax: number | undefined, runsAtOnce: number): number {
  if (!fileMax) return 65_536;
  return Math.min(1_048_576, Math.max(1024, Math.floor((fileMax * HOST_FILE_TABLE_SHARE) / runsAtOnce)));
}

/**
 * Whether this kernel gives the number of a process's open descriptors as the size of /proc/<pid>/fd (Linux 6.2+):
 * one stat per process instead of a listing of its descriptors. (This process has some open: its size is not 0.)
 */
const COUNT_BY_STAT = (() => {
  try {
    return fs.statSync('/proc/self/fd').size > 0;
  } catch {
    return false;
  }
})();

/**
 * The group's processes. Read synchronously, as the counts by stat are: a few µs each where a promise of the
 * thread pool costs ~100 µs of CPU, 4 times a second for every run in flight (bench/RESULTS.md). The file is at
 * most the group's pids.max lines; reading it takes no lock that creating or removing groups holds.
 */
function pidsOf(procsFile: string): number[] {
  try {
    return fs.readFileSync(procsFile, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function openFilesOfPid(pid: number): Promise<number> {
  try {
    if (COUNT_BY_STAT) return fs.statSync(`/proc/${pid}/fd`, { throwIfNoEntry: false })?.size ?? 0;
    // A listing may be thousands of entries: not on the event loop.
    return (await fs.promises.readdir(`/proc/${pid}/fd`)).length;
  } catch {
    // Gone meanwhile, or not ours to read: counts nothing.
    return 0;
  }
}

/** Open descriptors of the group's processes, counting no further than `stopAbove`. */
export async function openFilesOf(procsFile: string, stopAbove: number): Promise<number> {
  let total = 0;
  for (const pid of pidsOf(procsFile)) {
    total += await openFilesOfPid(pid);
    if (total > stopAbove) break;
  }
  return total;
}

/**
 * `group`, watched: past `maxOpenFiles` open descriptors across its processes, they are all killed and
 * `counters().openFileLimitHits` counts it. The watch ends with the group's destroy().
 */
export function watchOpenFiles(group: RunGroup, maxOpenFiles: number, everyMs = WATCH_EVERY_MS): RunGroup {
  const procsFile = group.procsFiles[0];
  if (!procsFile) return group;
  let hits = 0;
  let counting = false;
  const timer = setInterval(() => {
    if (counting) return;
    counting = true;
    void openFilesOf(procsFile, maxOpenFiles)
      .then(async (n) => {
        if (n <= maxOpenFiles) return;
        hits += 1;
        for (const pid of pidsOf(procsFile)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
      })
      .finally(() => (counting = false));
  }, everyMs);
  timer.unref();
  return {
    procsFiles: group.procsFiles,
    entryFiles: group.entryFiles,
    counters: () => ({ ...group.counters(), openFileLimitHits: hits }),
    peakMemoryBytes: () => group.peakMemoryBytes(),
    destroy: () => {
      clearInterval(timer);
      return group.destroy();
    },
  };
}

// The one mapping from "how a sandboxed process ended" to the resource limit that stopped it (the control
// group's memory and process counts, the open-files watch of open-files.ts, the kernel's signals), naming the
// limit and its setting, so that a user can tell what to change. Runs end ERROR with it as their reason;
// builds end FAILED with it (src/runtime/build/build.ts).
import type { LimitCounters } from './cgroups';

export type LimitReason =
  | 'MemoryLimitExceeded'
  | 'ProcessLimitExceeded'
  | 'OpenFilesLimitExceeded'
  | 'CpuLimitExceeded'
  | 'FileSizeLimitExceeded';

/**
 * The limits of each process of a sandboxed run besides its control group's: CPU seconds (SIGXCPU at the limit,
 * the run's reason, SIGKILL 5 s later for a process that ignores it), processes of its uid, file size, open files,
 * no core dumps. The run's processes are counted by its group (pids.max, which names the limit when hit); the uid's
 * RLIMIT_NPROC is a backstop a little above it. As `ulimit` options (root: the network launcher sets them in the
 * process that becomes bubblewrap, with no program of its own), or as prlimit's (rootless: inside bubblewrap, where
 * RLIMIT_NPROC counts the run's user namespace, the kernel counting it per namespace and uid; there without a
 * control group memory is also an address-space limit per process, `perProcessMemory`).
 */
export function processLimits(
  c: { cpuSeconds: number; maxProcesses: number; fileBytes: number; maxOpenFiles: number },
  rootless?: { perProcessMemory?: number },
): { ulimit: string[]; prlimit: string[] } {
  const nproc = c.maxProcesses + 16;
  return {
    // The soft CPU limit before the hard one (a hard limit below the soft one is refused); bash counts -f in KiB.
    ulimit: [
      `-S -t ${c.cpuSeconds}`,
      `-H -t ${c.cpuSeconds + 5}`,
      `-u ${nproc}`,
      `-f ${Math.ceil(c.fileBytes / 1024)}`,
      `-n ${c.maxOpenFiles}`,
      '-c 0',
    ],
    prlimit: [
      `--cpu=${c.cpuSeconds}:${c.cpuSeconds + 5}`,
      `--nproc=${nproc}`,
      `--fsize=${c.fileBytes}`,
      `--nofile=${c.maxOpenFiles}`,
      '--core=0',
      ...(rootless?.perProcessMemory !== undefined ? [`--as=${rootless.perProcessMemory}`] : []),
    ],
  };
}

export interface LimitHit {
  reason: LimitReason;
  /** A predicate: "The run <message>", "pip install <message>". */
  message: string;
}

export interface LimitSettings {
  memoryBytes: number;
  maxProcesses: number;
  maxRunOpenFiles: number;
  cpuSeconds: number;
  fileBytes: number;
}

const MiB = 1024 * 1024;

/**
 * The limit behind an unsuccessful end, if any: the run's control group killed a process for memory or
 * refused one a new process (counted since `before`, so an earlier build step's is not this one's), or the
 * kernel sent SIGXCPU (RLIMIT_CPU) or SIGXFSZ (RLIMIT_FSIZE). A program that coped (exit 0) hit nothing.
 */
export function limitHit(
  status: { code: number | null; signal: NodeJS.Signals | null },
  counters: { before: LimitCounters; after: LimitCounters } | undefined,
  s: LimitSettings,
): LimitHit | undefined {
  if (status.code === 0) return undefined;
  if (counters && counters.after.oomKills > counters.before.oomKills)
    return {
      reason: 'MemoryLimitExceeded',
      message: `used more than its memory limit of ${Math.round(s.memoryBytes / MiB)} MiB (RUN_MEMORY_LIMIT_MB): the kernel killed a process of it`,
    };
  if (counters && counters.after.processLimitHits > counters.before.processLimitHits)
    return {
      reason: 'ProcessLimitExceeded',
      message: `reached its limit of ${s.maxProcesses} processes and threads (SANDBOX_MAX_PROCESSES)`,
    };
  if (counters && (counters.after.openFileLimitHits ?? 0) > (counters.before.openFileLimitHits ?? 0))
    return {
      reason: 'OpenFilesLimitExceeded',
      message: `held more than its limit of ${s.maxRunOpenFiles} open files across its processes (SANDBOX_MAX_RUN_OPEN_FILES): its processes were killed`,
    };
  if (status.signal === 'SIGXCPU')
    return {
      reason: 'CpuLimitExceeded',
      message: `used more than its CPU time limit of ${s.cpuSeconds} s (SANDBOX_CPU_SECONDS)`,
    };
  if (status.signal === 'SIGXFSZ')
    return {
      reason: 'FileSizeLimitExceeded',
      message: `wrote a file larger than its limit of ${s.fileBytes} bytes (SANDBOX_FILE_MB)`,
    };
  return undefined;
}

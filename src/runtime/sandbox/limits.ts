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

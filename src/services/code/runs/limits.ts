// The limits a run executes under, as the console's run detail and GET /api/runs/{run_id}/limits show them.
// Every run of a kind runs under the same ones: the platform's settings (docs/configuration.md), which the api
// (time limits: a workflow timer started with the run) and the workers (the sandbox) read alike. A limit that
// is not enforced where the run executes (an assistant runs no user code; SANDBOX=off applies memory alone) is
// absent rather than shown as if it held.
import type { Config } from '../../../config';
import type { Run } from '../../../persistence/entities/run';

const MiB = 1024 * 1024;

export interface RunLimits {
  time_limit_seconds: number;
  sandbox?: 'on' | 'off';
  memory_mb?: number;
  log_bytes?: number;
  result_bytes?: number;
  max_processes?: number;
  cpu_seconds?: number;
  max_open_files?: number;
  file_mb?: number;
  disk_mb?: number;
  shm_mb?: number;
}

type LimitsConfig = Pick<Config, 'runLimits' | 'sandbox' | 'chatTimeLimitSeconds'>;

/** The limits `run` executes under with the settings `config`. */
export function limitsOfRun(config: LimitsConfig, run: Pick<Run, 'kind'>): RunLimits {
  if (run.kind === 'chat') return { time_limit_seconds: config.chatTimeLimitSeconds };
  const time = { time_limit_seconds: config.runLimits.timeSeconds };
  if (run.kind === 'assistant') return time;
  const { runLimits: r, sandbox: s } = config;
  const userCode: RunLimits = {
    ...time,
    sandbox: s.mode,
    memory_mb: r.memoryMb,
    log_bytes: r.logBytes,
    // A function's or tool's result; a structure's output is the events it posts.
    ...(run.kind === 'function' || run.kind === 'tool' ? { result_bytes: r.resultBytes } : {}),
  };
  if (s.mode === 'off') return userCode;
  return {
    ...userCode,
    max_processes: s.maxProcesses,
    cpu_seconds: s.cpuSeconds,
    max_open_files: s.maxOpenFiles,
    file_mb: s.fileBytes / MiB,
    disk_mb: s.diskBytes / MiB,
    shm_mb: s.shmBytes / MiB,
  };
}

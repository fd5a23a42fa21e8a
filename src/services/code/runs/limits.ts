// The limits a run executes under, as the console's run detail and GET /api/runs/{run_id}/limits show them.
// Every run of a kind runs under the same ones: the platform's settings (docs/configuration.md). The worker that
// starts a run records them on it with RUNNING (`recordedLimits`: its own sandbox settings, the time limit the
// run was created with), so that a run shows what held for it even after the settings change; a run not started
// yet shows the settings it would run under. A limit that is not enforced where the run executes (an assistant
// runs no user code; SANDBOX=off applies memory alone) is absent rather than shown as if it held.
import type { Config } from '../../../config';
import type { Run, RunKind, RunLimits } from '../../../persistence/entities/run';

export type { RunLimits };

const MiB = 1024 * 1024;

type LimitsConfig = Pick<Config, 'runJob' | 'runLimits' | 'sandbox' | 'chatMessageJob'>;

/** The limits `run` executes under with the settings `config`. */
export function limitsOfRun(config: LimitsConfig, run: Pick<Run, 'kind'>): RunLimits {
  if (run.kind === 'chat') return { time_limit_seconds: config.chatMessageJob.timeLimitSeconds };
  const time = { time_limit_seconds: config.runJob.timeLimitSeconds };
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
    max_run_open_files: s.maxRunOpenFiles,
    file_mb: s.fileBytes / MiB,
    disk_mb: s.diskBytes / MiB,
    shm_mb: s.shmBytes / MiB,
  };
}

/**
 * What a worker records on a run of `kind` it starts: its settings, with the time limit the run was created with,
 * and, for user code, how its sandbox isolated the run (`isolation`: Sandbox.mode and memoryScope).
 */
export function recordedLimits(
  config: LimitsConfig,
  kind: RunKind,
  timeLimitSeconds: number,
  isolation?: { mode: 'root' | 'rootless' | 'off'; memoryScope: 'run' | 'process' },
): RunLimits {
  const limits: RunLimits = { ...limitsOfRun(config, { kind }), time_limit_seconds: timeLimitSeconds };
  if (!isolation || limits.memory_mb === undefined) return limits;
  return { ...limits, isolation: isolation.mode, memory_scope: isolation.memoryScope };
}

/** The limits GET /runs/{run_id}/limits answers: those recorded when the run started, else today's settings. */
export const limitsShown = (config: LimitsConfig, run: Pick<Run, 'kind' | 'limits'>) =>
  run.limits ? { ...run.limits, recorded: true } : { ...limitsOfRun(config, run), recorded: false };

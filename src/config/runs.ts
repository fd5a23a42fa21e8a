// Runtime limits of code runs, and how the worker runs them: wall time, memory, output; the worker's slots and
// each organization's share; liveness, stopping, and output the database does not take at once.
import type { EnvReader, JobLimits } from './env';

export interface ExecutionConfig {
  /** Activities one worker runs at once (its activity task slots); a run or build holds one while it executes. */
  workerActivitySlots: number;
  /**
   * Runs and builds of one organization that execute at once, across all workers; the others wait QUEUED,
   * holding no worker slot, and start in order. Default: a quarter of WORKER_ACTIVITY_SLOTS.
   */
  orgMaxConcurrentRuns: number;
}

export interface RunSettings {
  /** One run (code, assistant): its wall time (RUN_TIME_LIMIT_SECONDS, a workflow timer); past it the run ends ERROR. */
  runJob: JobLimits;
  /** What one run's processes may take. */
  runLimits: {
    /** Memory of the whole run or build (its control group: every process and its tmpfs mounts), in MiB. */
    memoryMb: number;
    /** stdout+stderr kept per run; past it the run ends ERROR. */
    logBytes: number;
    /** A function's or tool's result (read over a pipe, never a file); past it the run ends ERROR ResultTooLarge. */
    resultBytes: number;
  };
  /** The worker's activity slots and each organization's share of execution (src/jobs/admission.ts). */
  execution: ExecutionConfig;
  /**
   * Runs: a worker silent this long is presumed dead; SIGTERM→SIGKILL grace when a run is stopped; the
   * api's URL as user code on a worker reaches it (GT_CLOUD_BASE_URL; in containers often not the public one).
   */
  runProcess: { heartbeatTimeoutSeconds: number; killGraceMs: number; apiBaseUrl: string };
  /**
   * Run output the database does not take at once (an outage, a full disk): the log lines a run's pump keeps
   * unsent (bounded by lines and bytes), and how long it keeps retrying after the process ended before the
   * rest is given up and recorded as lost on the run (docs/code-runs.md#lost-output).
   */
  runLogBuffer: { lines: number; bytes: number; graceSeconds: number };
  /** How long an assistant's call of a tool that requires approval waits by default (docs/waitpoints.md). */
  approvalTimeoutSeconds: number;
}

export function readRuns(env: EnvReader, publicBaseUrl: string): RunSettings {
  return {
    runJob: env.jobLimits('RUN_TIME_LIMIT_SECONDS', 3600),
    runLimits: {
      memoryMb: env.int('RUN_MEMORY_LIMIT_MB', 2048, 64),
      logBytes: env.int('RUN_LOG_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
      // Results travel through Temporal's history (payloads up to 2 MiB): 1.5 MiB at most.
      resultBytes: env.int('RUN_RESULT_LIMIT_BYTES', 1024 * 1024, 2, 1536 * 1024),
    },
    execution: readExecution(env),
    runProcess: {
      heartbeatTimeoutSeconds: env.int('RUN_HEARTBEAT_TIMEOUT_SECONDS', 30, 2, 3600),
      killGraceMs: env.int('RUN_KILL_GRACE_MS', 2000, 0, 60_000),
      apiBaseUrl: env.url('RUN_API_BASE_URL') ?? publicBaseUrl,
    },
    runLogBuffer: {
      lines: env.int('RUN_LOG_BUFFER_LINES', 20_000, 100, 10_000_000),
      bytes: env.int('RUN_LOG_BUFFER_BYTES', 4 * 1024 * 1024, 64 * 1024),
      graceSeconds: env.int('RUN_LOG_GRACE_SECONDS', 120, 0, 24 * 3600),
    },
    approvalTimeoutSeconds: env.int('APPROVAL_TIMEOUT_SECONDS', 86_400, 1, 2_592_000),
  };
}

function readExecution(env: EnvReader): ExecutionConfig {
  const workerActivitySlots = env.int('WORKER_ACTIVITY_SLOTS', 100, 1, 10_000);
  return {
    workerActivitySlots,
    orgMaxConcurrentRuns: env.int(
      'ORG_MAX_CONCURRENT_RUNS',
      Math.max(1, Math.floor(workerActivitySlots / 4)),
      1,
      100_000,
    ),
  };
}

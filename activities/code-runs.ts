import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { EntityManager } from 'typeorm';
import type { ActivityDeps } from './deps';
import { Run, RunStatus } from '../src/persistence/entities/run';
import { retryWhileUnavailable } from '../src/persistence/unavailable';
import { signalGroup } from '../src/runtime/process/user-process';
import { superviseUserProcess, SupervisedOutcome } from '../src/runtime/process/supervise';
import { functionEnding } from '../src/services/code/runs/function-result';
import { recordedLimits } from '../src/services/code/runs/limits';
import {
  type ExecutionRecords,
  prepareExecution,
  readExecution,
  RUN_HOME_PREFIX,
  RunSetupError,
} from '../src/services/code/runs/execution';
import { runMcpTool } from '../src/services/code/mcp-tools';
import type { McpServerLocation } from '../src/persistence/entities/code-resource';
import { outboundPolicyFor } from '../src/security/outbound-policy';
import {
  claimExecution,
  recordEnding,
  recordedEnding,
  finishRun,
  isTerminal,
  markRunning,
  markStarting,
  withLostOutput,
} from '../src/services/code/runs/lifecycle';
import type { ExecutionSlotJob, RunEnding, RunRetryInput } from '../src/temporal/contracts';
import { releaseSlotIn, type SlotGrant } from '../src/jobs/admission';
import { signalGranted } from './execution-slots';
import { appendLogs } from '../src/services/code/runs/state';
import { markRetrying } from '../src/services/code/runs/retries';
import { CgroupUnavailable } from '../src/runtime/sandbox/cgroups';
import type { SandboxIdentity } from '../src/runtime/sandbox/sandbox-types';
import { sandboxSetupFailure } from '../src/runtime/sandbox/setup-failure';
import { heartbeatEveryMs, shutdownFailure, withHeartbeats } from './heartbeat';

/**
 * What a process activity records in its heartbeats: enough for a retry to find what it left behind. The first
 * heartbeat comes one interval after the spawn (supervise.ts): a worker lost before it leaves no marker; its
 * process dies with it all the same (parent-death signal, the uid sweep), only its HOME stays in the temp dir.
 */
interface ProcessMarker {
  pid: number;
  host: string;
  /** The run's private HOME. */
  home: string;
}

/**
 * Cleans up after a previous attempt whose worker was lost, when it ran on this host: kills its process
 * group if it still runs (the pid is only trusted when /proc shows it carries this run's id in its
 * environment: pids are reused) and removes its HOME.
 */
function cleanUpLeftover(marker: ProcessMarker | undefined, runId: string): void {
  if (!marker?.pid || marker.host !== os.hostname()) return;
  try {
    const environ = fs.readFileSync(`/proc/${marker.pid}/environ`, 'latin1');
    if (environ.split('\0').includes(`GT_CLOUD_STRUCTURE_RUN_ID=${runId}`)) signalGroup(marker.pid, 'SIGKILL');
  } catch {
    // gone already, or not ours to read
  }
  if (
    typeof marker.home === 'string' &&
    path.basename(marker.home).startsWith(RUN_HOME_PREFIX) &&
    path.dirname(marker.home) === os.tmpdir()
  ) {
    fs.rmSync(marker.home, { recursive: true, force: true });
  }
}

function endingOf(outcome: SupervisedOutcome, logLimitBytes: number): RunEnding {
  switch (outcome.kind) {
    case 'start-failed':
      return { status: 'ERROR', reason: 'StartFailed', error: `The process could not be started: ${outcome.message}` };
    case 'log-limit':
      return {
        status: 'ERROR',
        reason: 'LogLimitExceeded',
        error: `Log limit exceeded: the run wrote more than ${logLimitBytes} bytes to stdout and stderr`,
      };
    case 'not-wanted':
      return { status: 'ERROR', reason: 'AlreadyEnded', error: 'The run ended before its process started' };
    case 'exited': {
      const { code, signal, limit } = outcome.status;
      if (code === 0) return { status: 'SUCCEEDED', exitCode: 0, message: null };
      // Stopped by a resource limit (the sandbox's one mapping, src/runtime/sandbox/limits.ts).
      if (limit) {
        const subject =
          limit.reason === 'CpuLimitExceeded' || limit.reason === 'FileSizeLimitExceeded' ? 'process' : 'run';
        return { status: 'ERROR', reason: limit.reason, error: `The ${subject} ${limit.message}` };
      }
      // The sandbox's own steps failed before the program started (a program imitating them mislabels only itself).
      const setup = sandboxSetupFailure(code, outcome.lastStderrLine);
      if (setup)
        return { status: 'ERROR', reason: 'SandboxSetupFailed', error: `The sandbox could not be set up: ${setup}` };
      if (code !== null) return { status: 'FAILED', exitCode: code, message: `The process exited with code ${code}` };
      // Shell convention for a death by signal (e.g. 137 for SIGKILL, which is also what an OOM kill looks like).
      const number = os.constants.signals[signal as NodeJS.Signals] ?? 0;
      return { status: 'FAILED', exitCode: 128 + number, message: `The process was killed by ${signal}` };
    }
  }
}

/** Run activities: the status writes of the run workflow and the long activity that runs the user process. */
export function createCodeRunActivities(deps: ActivityDeps) {
  const { ds, config, box, log, sandbox, builds } = deps;
  const releaseIdentity = (identity: SandboxIdentity | undefined, runId: string) =>
    void identity
      ?.release({ batched: true })
      .catch((err: Error) => log.error({ err, runId }, 'a run uid could not be swept; it stays leased'));
  const mcpDeps = { ds, box, policy: outboundPolicyFor(config), maxResponseBytes: config.runLimits.resultBytes };

  /**
   * A run of a tool of `mcp` code (src/services/code/mcp-tools.ts): no process, one request to its server, fenced
   * and recorded like a process (a retry after the call started ends WorkerLost rather than calling it twice).
   */
  async function executeMcpToolRun(
    { run, deployment }: ExecutionRecords,
    tool: { name: string; location: McpServerLocation },
    input: { timeLimitSeconds?: number },
  ): Promise<RunEnding> {
    const ctx = Context.current();
    if (!(await claimExecution(ds, run.run_id, ctx.info.attempt, run.attempt)))
      return {
        status: 'ERROR',
        reason: 'WorkerLost',
        error: 'The worker running this run stopped responding while starting it; the run was not restarted',
      };
    const timeLimitSeconds = input.timeLimitSeconds ?? config.runJob.timeLimitSeconds;
    // Only these bound it: there is no process (its time limit is the workflow's timer; the answer's size is read capped).
    const limits = { time_limit_seconds: timeLimitSeconds, result_bytes: config.runLimits.resultBytes };
    if (!(await retryWhileUnavailable(() => markRunning(ds, run.run_id, new Date(), run.attempt, limits))))
      return { status: 'ERROR', reason: 'AlreadyEnded', error: 'The run ended before its call started' };
    try {
      const ending = await withHeartbeats((_beat, signal) =>
        runMcpTool(
          mcpDeps,
          run,
          { ...tool, deployment },
          {
            signal,
            timeoutMs: timeLimitSeconds * 1000,
            log: (stream, line) => appendLogs(ds, run.run_id, [{ stream, line }]),
          },
        ),
      );
      void recordEnding(ds, run.run_id, run.attempt, ending).catch((err: Error) =>
        log.warn({ err, runId: run.run_id }, "the run's ending could not be recorded beside its answer"),
      );
      return ending;
    } catch (err) {
      if (err instanceof RunSetupError) return { status: 'ERROR', reason: err.reason, error: err.message };
      throw err;
    }
  }

  const activities = {
    /** QUEUED → STARTING; false when the run does not exist (its row never committed) or already ended. */
    async startCodeRun(input: { runId: string }): Promise<boolean> {
      const status = await markStarting(ds, input.runId);
      return status !== undefined && !isTerminal(status);
    },

    /**
     * Runs the main file of the run's deployment (function runs: its handler, through the runtime's shim)
     * and answers how it ended. Heartbeats while the process
     * runs; on cancellation (or worker shutdown) stops the process group, then rethrows.
     *
     * Retries: a retry that finds the run RUNNING means an earlier attempt's process was started and its
     * worker was lost. The run then ends ERROR rather than running the user's code a second time (it may
     * have side effects). So does a retry that finds it STARTING but claimed by an earlier attempt (claimed
     * just before the spawn: that attempt may still be starting it); only an unclaimed run is started.
     */
    async executeCodeRun(input: { runId: string; timeLimitSeconds?: number }): Promise<RunEnding> {
      const ctx = Context.current();
      // Until the process starts, every step is safe to repeat: a database outage (a worker cut from PostgreSQL)
      // is waited out here, heartbeating, instead of spending the attempts of the run's retry policy.
      const readingBeat = setInterval(() => ctx.heartbeat(), heartbeatEveryMs(ctx));
      const records = await retryWhileUnavailable(() => readExecution(ds, input.runId)).finally(() =>
        clearInterval(readingBeat),
      );
      if (!records || isTerminal(records.run.status))
        return { status: 'ERROR', reason: 'AlreadyEnded', error: 'The run already ended' };
      const { run } = records;
      if (run.status === 'RUNNING') {
        // The earlier attempt's process ended, but Temporal never got its answer: answer it now.
        const recorded = await recordedEnding(ds, run.run_id, run.attempt);
        if (recorded) return recorded;
        cleanUpLeftover(ctx.info.heartbeatDetails as ProcessMarker | undefined, run.run_id);
        return {
          status: 'ERROR',
          reason: 'WorkerLost',
          error: 'The worker running this run stopped; the run was not restarted',
        };
      }

      const { resource } = records;
      if (resource && 'mcp' in resource.code)
        return executeMcpToolRun(records, { name: resource.name, location: resource.code.mcp }, input);

      // The run's identity (uid lease, control group: in the organization's group) is made while its process is
      // prepared (build, credential, secrets, HOME): neither waits for the other. A run whose organization is
      // gone fails its preparation.
      const memoryBytes = config.runLimits.memoryMb * 1024 * 1024;
      // A build fetched from the blob store first (local-builds.ts) may take longer than the heartbeat timeout.
      const preparingBeat = setInterval(() => ctx.heartbeat(), heartbeatEveryMs(ctx));
      const [preparing, isolating] = await Promise.allSettled([
        retryWhileUnavailable(() => prepareExecution({ ds, box, config, builds }, records)),
        records.organization
          ? sandbox.identity(sandbox.gidOf(records.organization.sandbox_index), memoryBytes)
          : Promise.resolve(undefined),
      ]).finally(() => clearInterval(preparingBeat));
      if (preparing.status === 'rejected') {
        // Nothing of the run ever ran in the identity made meanwhile.
        if (isolating.status === 'fulfilled') releaseIdentity(isolating.value, run.run_id);
        if (preparing.reason instanceof RunSetupError)
          return { status: 'ERROR', reason: preparing.reason.reason, error: preparing.reason.message };
        throw preparing.reason;
      }
      const prepared = preparing.value;
      if (isolating.status === 'rejected') {
        // Fail closed: no control group, no run.
        prepared.releaseBuild();
        void fs.promises.rm(prepared.home, { recursive: true, force: true }).catch(() => undefined);
        if (!(isolating.reason instanceof CgroupUnavailable)) throw isolating.reason;
        return {
          status: 'ERROR',
          reason: 'SandboxUnavailable',
          error: `The run could not be isolated: ${(isolating.reason as Error).message}`,
        };
      }
      const identity = isolating.value;
      try {
        // The fence, just before the spawn: an earlier attempt presumed lost (a missed heartbeat) may still be
        // starting the process.
        if (!(await claimExecution(ds, run.run_id, ctx.info.attempt, run.attempt))) {
          return {
            status: 'ERROR',
            reason: 'WorkerLost',
            error: 'The worker running this run stopped responding while starting it; the run was not restarted',
          };
        }
        const outcome = await superviseUserProcess({
          command: prepared.command,
          env: prepared.env,
          isolate: (command) =>
            sandbox.wrap({
              ...command,
              home: prepared.home,
              identity,
              memoryBytes,
              readOnly: [prepared.buildPath, ...prepared.inputFiles],
            }),
          logLimitBytes: config.runLimits.logBytes,
          logBuffer: { ...config.runLogBuffer, graceMs: config.runLogBuffer.graceSeconds * 1000 },
          ...(prepared.returnsResult ? { resultLimitBytes: config.runLimits.resultBytes } : {}),
          killGraceMs: config.runProcess.killGraceMs,
          // A database outage (or full disk) is waited out rather than losing log lines (the pump retries and
          // records what it had to give up), or stopping a started process (whose retry would run the user's
          // code a second time).
          writeLogs: (lines) => appendLogs(ds, run.run_id, lines), // one statement
          onStarted: () => {
            const startedAt = new Date();
            // Workflows started before the time limit was passed here record no limits.
            const limits =
              input.timeLimitSeconds === undefined
                ? undefined
                : recordedLimits(config, run.kind, input.timeLimitSeconds, sandbox);
            return retryWhileUnavailable(() => markRunning(ds, run.run_id, startedAt, run.attempt, limits));
          },
          heartbeat: (pid) => ctx.heartbeat({ pid, host: os.hostname(), home: prepared.home } satisfies ProcessMarker),
          heartbeatEveryMs: heartbeatEveryMs(ctx),
          cancelled: ctx.cancelled,
          onLogWriteError: (err) =>
            log.warn({ err, runId: run.run_id }, 'run logs could not be written; retrying while the run lasts'),
        });
        const processEnding = endingOf(outcome, config.runLimits.logBytes);
        const ending = prepared.returnsResult
          ? functionEnding(
              processEnding,
              outcome.kind === 'exited' ? outcome.result : undefined,
              config.runLimits.resultBytes,
            )
          : processEnding;
        if (outcome.lostOutput)
          log.error({ runId: run.run_id, lost: outcome.lostOutput }, 'run output lost: recorded on the run');
        const answer = withLostOutput(ending, outcome.lostOutput);
        // Not awaited: the answer does not wait for it (a database outage least of all). A write that lands after
        // the run ended or went on to its next attempt changes nothing (it is guarded by both); a retry comes only
        // after the heartbeat timeout.
        void recordEnding(ds, run.run_id, run.attempt, answer).catch((err: Error) =>
          log.warn({ err, runId: run.run_id }, "the run's ending could not be recorded beside its answer"),
        );
        return answer;
      } catch (err) {
        // A worker shutting down is not a cancellation of the run: fail this attempt so that the retry (on
        // another worker) records what happened.
        throw shutdownFailure(err, 'this run') ?? err;
      } finally {
        // Nothing of the run outlives it: its group is emptied and removed, and the uid is reused only once
        // /proc shows none of its processes (the lease is held until then). Not awaited: that check batches
        // the runs that end within seconds, and the run's end is recorded meanwhile; a worker that dies first
        // leaves the lease to be reclaimed the same way.
        releaseIdentity(identity, run.run_id);
        prepared.releaseBuild();
        void fs.promises.rm(prepared.home, { recursive: true, force: true }).catch(() => undefined);
      }
    },

    /**
     * The run's attempt `attempt` ended with `ending`, which its retry policy retries: back to QUEUED as the next
     * attempt, with a RunRetrying event (idempotent). False when the run ended meanwhile.
     */
    async retryCodeRun(input: RunRetryInput): Promise<boolean> {
      return markRetrying(ds, input);
    },

    /**
     * The terminal write (idempotent): status, final SYSTEM event, run credentials deleted. `releaseSlot`: and
     * the run's execution slot given back in the same transaction (its grants signalled after the commit).
     */
    async finishCodeRun(input: {
      runId: string;
      ending: RunEnding;
      releaseSlot?: ExecutionSlotJob;
    }): Promise<RunStatus | 'MISSING'> {
      const { releaseSlot } = input;
      let grants: SlotGrant[] = [];
      const release = releaseSlot
        ? async (em: EntityManager, moved?: Run) => {
            const limit = config.execution.orgMaxConcurrentRuns;
            grants = await releaseSlotIn(em, releaseSlot, { limit, organizationId: moved?.organization_id });
          }
        : undefined;
      const status = await finishRun(ds, input.runId, input.ending, { last: release });
      await signalGranted(deps, grants);
      return status ?? 'MISSING';
    },
  };
  return {
    ...activities,
    // Their former names, which runs started before the rename (workflow structureRunWorkflow) call.
    startStructureRun: activities.startCodeRun,
    executeStructureRun: activities.executeCodeRun,
    finishStructureRun: activities.finishCodeRun,
  };
}

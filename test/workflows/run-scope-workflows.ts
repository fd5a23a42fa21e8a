// Workflows only tests run (run-scope.test.ts and test/unit/worker/create-worker.stack-traces.test.ts bundle
// this file): each puts a piece of work in one of the frames of workflows/run-scope.ts (`withinLimit`,
// `runToEnding`, `jobToEnding`) as `FrameProbe` says, with stubbed activities: `probeWork` answers what the work
// ends with, `probeFinish` is the terminal write.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { RunStatus } from '../../src/persistence/entities/run';
import type { JobEnding, RunEnding } from '../../src/temporal/contracts';
import { causeOf, jobToEnding, runToEnding, withinLimit } from '../../workflows/run-scope';

export interface FrameProbe {
  frame: 'withinLimit' | 'runToEnding' | 'jobToEnding';
  timeLimitSeconds: number;
  /** withinLimit only: whether a `cancel` signal cancels the work (runToEnding and jobToEnding: always). */
  cancelSignal?: boolean;
  /** Whether the work starts the time limit (before its wait). */
  startTimer: boolean;
  /** The work first waits this long on a workflow timer (time skipping makes it instant). */
  waitSeconds?: number;
  /**
   * How the work ends: `ending` (probeWork answers one), `missing` (probeWork answers undefined: nothing to
   * end), `activity-fails` (probeWork fails with `failureType`, or with no type when unset),
   * `workflow-throws` (the workflow code itself throws an Error).
   */
  outcome: 'ending' | 'missing' | 'activity-fails' | 'workflow-throws';
  failureType?: string;
}

export interface ProbeActivities {
  probeWork(input: { outcome: FrameProbe['outcome']; failureType?: string }): Promise<unknown>;
  /** Answers the ending's status (the frame's answer), or the ending itself when it is a word. */
  probeFinish(input: { ending: unknown }): Promise<string>;
}

const { probeWork, probeFinish } = proxyActivities<ProbeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

/** The endings of `withinLimit` as plain words, so that a test sees which one was taken. */
const WORDS = {
  timedOut: () => 'timed out',
  cancelled: (by: string) => `cancelled by ${by}`,
  failed: (err: unknown) => `failed: ${(causeOf(err) as Error).message}`,
};

export async function frameProbeWorkflow(probe: FrameProbe): Promise<unknown> {
  const work = async (startTimer: () => void) => {
    if (probe.startTimer) startTimer();
    if (probe.waitSeconds) await sleep(probe.waitSeconds * 1000);
    if (probe.outcome === 'workflow-throws') throw new Error('the workflow code broke');
    return (await probeWork({ outcome: probe.outcome, failureType: probe.failureType })) ?? undefined;
  };
  const finish = (ending: unknown) => probeFinish({ ending });
  const { timeLimitSeconds } = probe;
  switch (probe.frame) {
    case 'withinLimit':
      return withinLimit({ timeLimitSeconds, cancelSignal: probe.cancelSignal ?? false, endings: WORDS }, work, finish);
    case 'runToEnding':
      return runToEnding(
        { timeLimitSeconds, failedTypes: ['ModelRequestRejected'] },
        work as (startTimer: () => void) => Promise<RunEnding | undefined>,
        (ending) => finish(ending) as Promise<RunStatus>,
      );
    case 'jobToEnding':
      return jobToEnding(
        { timeLimitSeconds, subject: 'The probe', failedReason: 'ProbeFailed' },
        work as (startTimer: () => void) => Promise<JobEnding | undefined>,
        finish,
      );
  }
}

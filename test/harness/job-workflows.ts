// Tiny workflows of the kernel's unit tests (test/unit/jobs/), bundled by those tests and run by a worker of
// their own: a job's workflow that records its end when its `cancel` signal comes (through an activity, as
// the job workflows of workflows/ do), one that answers at once, one that never ends.
import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import { cancelRunSignal } from '../../src/temporal/contracts';

/** What the test's worker does for the workflows: the end a job's workflow records. */
export interface JobTestActivities {
  recordEnd(input: { kind: string; id: string; status: string; requestedBy: string }): Promise<string>;
}

const { recordEnd } = proxyActivities<JobTestActivities>({ startToCloseTimeout: '10 seconds' });

/** Waits for the job's cancel signal, then records `endAs` (CANCELLED; another end: one that came first). */
export async function cancellableJob(input: { kind: string; id: string; endAs: string }): Promise<string> {
  let requestedBy: string | undefined;
  setHandler(cancelRunSignal, (signal) => void (requestedBy = signal.requestedBy));
  await condition(() => requestedBy !== undefined);
  return recordEnd({ kind: input.kind, id: input.id, status: input.endAs, requestedBy: requestedBy! });
}

/** Answers its argument (a short workflow whose result the caller waits for). */
export async function answers(question: string): Promise<string> {
  return `answered: ${question}`;
}

/** Runs until it is cancelled, terminated or timed out. */
export async function neverEnds(): Promise<void> {
  await condition(() => false);
}

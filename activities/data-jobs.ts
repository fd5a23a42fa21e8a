// Activities of data jobs and of scheduled job starts. The ingest activity heartbeats between items and while
// it waits on a structure run (a cancel reaches it within about a second and aborts fetches and runs);
// the rest is src/services/data-connectors/ (ingest.ts, job-steps.ts).
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import type { DataJobStatus } from '../src/persistence/entities/data-connector';
import { ingestDataJob } from '../src/services/data-connectors/ingest';
import { chainJobsOf, startScheduledJob, type DataJobEnding } from '../src/services/data-connectors/job-steps';
import { finishJob } from '../src/jobs/finish';
import { DATA_JOB } from '../src/jobs/kinds';
import { startJob } from '../src/jobs/start';
import type { ScheduledJobInput, ScheduledJobOutcome } from '../src/temporal/contracts';
import { withHeartbeats } from './heartbeat';

export function createDataJobActivities(deps: ActivityDeps) {
  const { ds, log } = deps;
  return {
    /** QUEUED → RUNNING once the row committed (the kernel's start); false when the job does not exist or already ended. */
    async startDataJob(input: { jobId: string }): Promise<boolean> {
      return (await startJob(ds, DATA_JOB, input.jobId)) === 'RUNNING';
    },

    /** Lists, reads, transforms and stores every item of the connector; per-item failures become `errors[]`. */
    async ingestDataJob(input: { jobId: string }): Promise<DataJobEnding> {
      const ctx = Context.current();
      try {
        return await withHeartbeats((beat, signal) => ingestDataJob(deps, input.jobId, { signal, beat }));
      } catch (err) {
        if (!ctx.cancellationSignal.aborted) log.warn({ err, jobId: input.jobId }, 'data job failed');
        throw err;
      }
    },

    /** The terminal write (guarded: a job that already ended keeps its end); answers the job's status. */
    async finishDataJob(input: { jobId: string; ending: DataJobEnding }): Promise<DataJobStatus | 'MISSING'> {
      return (await finishJob(ds, DATA_JOB, input.jobId, input.ending)) as DataJobStatus | 'MISSING';
    },

    /**
     * After a successful ingest, before the terminal write (which records the ids): knowledge base jobs of the
     * knowledge bases covering the connector's prefix.
     */
    async chainKnowledgeBaseJobs(input: { jobId: string }): Promise<string[]> {
      return chainJobsOf(deps, input.jobId);
    },

    /** What a schedule does when due: a job of its data connector or knowledge base, unless one is open. */
    async startScheduledJob(input: ScheduledJobInput): Promise<ScheduledJobOutcome> {
      return startScheduledJob(deps, input);
    },
  };
}

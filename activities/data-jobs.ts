// Activities of data jobs and of scheduled job starts. The ingest activity heartbeats between items and while
// it waits on a structure run (a cancel reaches it within about a second and aborts fetches and runs);
// status writes go through the guarded transition of src/services/data-connectors/job-state.ts.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { DataConnector, DataJob, DataJobStatus } from '../src/persistence/entities/data-connector';
import type { JobError } from '../src/persistence/entities/knowledge-base';
import { HttpError } from '../src/errors';
import { chainKnowledgeBaseJobs } from '../src/services/data-connectors/chain';
import { ingestDataJob } from '../src/services/data-connectors/ingest';
import { transitionDataJob } from '../src/services/data-connectors/job-state';
import { startDataJob } from '../src/services/data-connectors/jobs';
import { createJob } from '../src/services/knowledge/jobs';
import { ROW_VISIBLE_WAIT_MS } from '../src/services/code/runs/lifecycle';
import type { ScheduledJobInput, ScheduledJobOutcome } from '../src/temporal/contracts';
import { waitFor } from '../src/temporal/workflow-records';

export interface DataJobEnding {
  status: Exclude<DataJobStatus, 'QUEUED' | 'RUNNING'>;
  reason?: string;
  message?: string;
  requestedBy?: string;
  errors?: JobError[];
  bytesIngested?: number;
  stats?: Record<string, number>;
  /** Knowledge base jobs the chain started (status_detail.knowledge_base_job_ids). */
  knowledgeBaseJobIds?: string[];
}

const SCHEDULE_ACTOR = 'schedule';

export function createDataJobActivities(deps: ActivityDeps) {
  const { ds, log } = deps;
  return {
    /**
     * QUEUED → RUNNING; false when the job does not exist or already ended (nothing to do). The api commits
     * the row just after Temporal accepted the workflow, so the row is waited for (as runs do, ROW_VISIBLE_WAIT_MS)
     * and locked and read before the transition.
     */
    async startDataJob(input: { jobId: string }): Promise<boolean> {
      const status = await waitFor(
        () =>
          ds.transaction(async (em) => {
            const rows: Array<{ status: DataJobStatus }> = await em.query(
              `SELECT status FROM data_jobs WHERE data_job_id = $1 FOR UPDATE`,
              [input.jobId],
            );
            if (rows[0]?.status !== 'QUEUED') return rows[0]?.status;
            await transitionDataJob(em, input.jobId, 'RUNNING');
            return 'RUNNING' as const;
          }),
        (s) => s !== undefined,
        ROW_VISIBLE_WAIT_MS,
      );
      return status === 'RUNNING';
    },

    /** Lists, reads, transforms and stores every item of the connector; per-item failures become `errors[]`. */
    async ingestDataJob(input: { jobId: string }): Promise<DataJobEnding> {
      const ctx = Context.current();
      const beat = () => ctx.heartbeat();
      const heartbeats = setInterval(beat, Math.max(200, Math.min(1_000, (ctx.info.heartbeatTimeoutMs ?? 15_000) / 4)));
      try {
        return await ingestDataJob(deps, input.jobId, { signal: ctx.cancellationSignal, beat });
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          const reason = ctx.cancellationSignal.reason;
          if (reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN') {
            throw ApplicationFailure.retryable('The worker running this step shut down', 'WorkerShutdown');
          }
          throw reason ?? err;
        }
        log.warn({ err, jobId: input.jobId }, 'data job failed');
        throw err;
      } finally {
        clearInterval(heartbeats);
      }
    },

    /** The terminal write (guarded: a job that already ended keeps its end); answers the job's status. */
    async finishDataJob(input: { jobId: string; ending: DataJobEnding }): Promise<DataJobStatus | 'MISSING'> {
      const { ending } = input;
      await transitionDataJob(ds, input.jobId, ending.status, {
        status_detail: {
          ...(ending.reason ? { reason: ending.reason } : {}),
          ...(ending.message ? { message: ending.message } : {}),
          ...(ending.requestedBy ? { requested_by: ending.requestedBy } : {}),
          ...(ending.stats ? { stats: ending.stats } : {}),
          ...(ending.knowledgeBaseJobIds?.length ? { knowledge_base_job_ids: ending.knowledgeBaseJobIds } : {}),
        },
        ...(ending.errors ? { errors: ending.errors } : {}),
        ...(ending.bytesIngested !== undefined ? { bytes_ingested: ending.bytesIngested } : {}),
      });
      const job = await ds.getRepository(DataJob).findOneBy({ data_job_id: input.jobId });
      return job?.status ?? 'MISSING';
    },

    /**
     * After a successful ingest, before the terminal write (which records the ids): knowledge base jobs of the
     * knowledge bases covering the connector's prefix.
     */
    async chainKnowledgeBaseJobs(input: { jobId: string }): Promise<string[]> {
      const job = await ds.getRepository(DataJob).findOneBy({ data_job_id: input.jobId });
      const connector =
        job && (await ds.getRepository(DataConnector).findOneBy({ data_connector_id: job.data_connector_id }));
      if (!connector) return [];
      return chainKnowledgeBaseJobs(deps, connector, input.jobId);
    },

    /** What a schedule does when due: a job of its data connector or knowledge base, unless one is open. */
    async startScheduledJob(input: ScheduledJobInput): Promise<ScheduledJobOutcome> {
      const caller = {
        organizationId: input.organizationId,
        userId: null,
        apiKeyId: SCHEDULE_ACTOR,
        actor: SCHEDULE_ACTOR,
        runId: null,
      };
      if (input.target === 'data-connector') {
        const connector = await ds
          .getRepository(DataConnector)
          .findOneBy({ data_connector_id: input.id, organization_id: input.organizationId });
        if (!connector) return { skipped: 'The data connector no longer exists' };
        const job = await startDataJob(deps, caller, connector, { ifOpen: 'skip' });
        return job ? { jobId: job.data_job_id } : { skipped: 'A job of this data connector is still open' };
      }
      try {
        return { jobId: (await createJob(deps, caller, input.id)).knowledge_base_job_id };
      } catch (err) {
        if (err instanceof HttpError && [404, 409].includes(err.status)) return { skipped: err.message };
        throw err;
      }
    },
  };
}

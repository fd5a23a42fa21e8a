// Data jobs as the api sees them: create (the QUEUED row and the start of workflow `data-job-<uuid>` in one
// step, at most one open job per connector), list, get, cancel (the workflow's `cancel` signal and a bounded
// wait for the recorded end). The api never writes a job's status.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { In, type DataSource, type EntityManager } from 'typeorm';
import type { Caller } from '../caller';
import type { Config } from '../../config';
import { conflict } from '../../errors';
import type { PageRequest } from '../../persistence/pagination';
import { DataConnector, DataJob, DataJobStatus } from '../../persistence/entities/data-connector';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import { workflowStart } from '../../temporal/contracts';
import { pendingIdempotencyKey } from '../../persistence/pending-claim';
import { insertAndStart } from '../../jobs/create';
import { cancelAndWait, stopOpen } from '../../jobs/cancel';
import { DATA_JOB } from '../../jobs/kinds';

export interface DataJobDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
}

export const findDataJob = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, DataJob, caller.organizationId, { data_job_id: id }, 'Data job');

export async function listDataJobs(
  ds: DataSource,
  caller: Caller,
  connectorId: string,
  page: PageRequest,
  statuses?: DataJobStatus[],
) {
  await findInOrg(ds, DataConnector, caller.organizationId, { data_connector_id: connectorId }, 'Data connector');
  return pageInOrg(
    ds,
    DataJob,
    caller.organizationId,
    page,
    { data_connector_id: connectorId, ...(statuses?.length ? { status: In(statuses) } : {}) },
    { created_at: 'DESC', data_job_id: 'DESC' },
  );
}

/** The open job of a connector, if any (inside the creation lock). */
const openJobOf = (em: EntityManager, connectorId: string) =>
  em.getRepository(DataJob).findOneBy({ data_connector_id: connectorId, status: In([...DATA_JOB.open]) });

/**
 * A new QUEUED job of `connector` with its workflow; 409 while another job of the connector is open
 * (`ifOpen: 'skip'` answers undefined instead: a scheduled start).
 */
export async function startDataJob(
  deps: DataJobDeps,
  caller: Pick<Caller, 'organizationId' | 'actor'>,
  connector: DataConnector,
  opts: { ifOpen?: 'conflict' | 'skip' } = {},
): Promise<DataJob | undefined> {
  const now = new Date();
  const job: DataJob = {
    data_job_id: randomUUID(),
    data_connector_id: connector.data_connector_id,
    organization_id: caller.organizationId,
    status: 'QUEUED',
    status_detail: null,
    errors: [],
    bytes_ingested: 0,
    idempotency_key: pendingIdempotencyKey(),
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
  const SKIPPED = Symbol('skipped');
  try {
    return await insertAndStart(deps.ds, deps.temporal, {
      taskQueue: deps.config.temporal.taskQueue,
      resource: {
        kind: 'data-job',
        id: job.data_job_id,
        organizationId: caller.organizationId,
        summary: `Data job of ${connector.type} connector ${connector.name} (${connector.data_connector_id})`,
      },
      insert: async (em) => {
        // Serializes job creation per connector, so two requests cannot both find none open.
        await em.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`data-job:${connector.data_connector_id}`]);
        const open = await openJobOf(em, connector.data_connector_id);
        if (open) {
          if (opts.ifOpen === 'skip') throw SKIPPED;
          throw conflict(`Data job ${open.data_job_id} of this data connector is still ${open.status}`);
        }
        return em.getRepository(DataJob).save(job);
      },
      start: workflowStart.dataJob({
        jobId: job.data_job_id,
        timeLimitSeconds: deps.config.dataJob.timeLimitSeconds,
        heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
      }),
    });
  } catch (err) {
    if (err === SKIPPED) return undefined;
    throw err;
  }
}

export async function createDataJob(deps: DataJobDeps, caller: Caller, connectorId: string): Promise<DataJob> {
  const connector = await findInOrg(
    deps.ds,
    DataConnector,
    caller.organizationId,
    { data_connector_id: connectorId },
    'Data connector',
  );
  return (await startDataJob(deps, caller, connector))!;
}

/** Cancels the job and answers once its workflow recorded the end (the job kernel's cancelAndWait). */
export async function cancelDataJob(deps: DataJobDeps, caller: Caller, id: string): Promise<DataJob> {
  const job = await findDataJob(deps.ds, caller, id);
  return cancelAndWait(deps.temporal, DATA_JOB, job, {
    requestedBy: caller.actor,
    read: () => deps.ds.getRepository(DataJob).findOneByOrFail({ data_job_id: id }),
  });
}

/** Before a connector is deleted or its config replaced: cancels its open jobs and waits (bounded) for their ends. */
export async function stopOpenDataJobs(
  deps: { ds: DataSource; temporal: Client },
  requestedBy: string,
  connectorId: string,
): Promise<void> {
  const open = await deps.ds
    .getRepository(DataJob)
    .findBy({ data_connector_id: connectorId, status: In([...DATA_JOB.open]) });
  await stopOpen(deps, DATA_JOB, open, requestedBy);
}

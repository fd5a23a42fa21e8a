// Knowledge base jobs as the api sees them: create (the QUEUED row and the start of workflow
// `knowledge-base-job-<uuid>` in one step, at most one open job per knowledge base), list, get, cancel (the
// workflow's `cancel` signal and a bounded wait for the recorded end). The api never writes a job's status.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { In, type DataSource } from 'typeorm';
import type { Caller } from '../caller';
import type { Config } from '../../config';
import { conflict } from '../../errors';
import type { PageRequest } from '../../persistence/pagination';
import { KnowledgeBase, KnowledgeBaseJob, KnowledgeBaseJobStatus } from '../../persistence/entities/knowledge-base';
import { findInOrg, pageInOrg } from '../../persistence/scoped';
import { workflowStart } from '../../temporal/contracts';
import { pendingIdempotencyKey } from '../../persistence/pending-claim';
import { insertAndStart } from '../../jobs/create';
import { cancelAndWait, stopOpen } from '../../jobs/cancel';
import { KNOWLEDGE_BASE_JOB } from '../../jobs/kinds';

interface JobDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
}

export const findJob = (ds: DataSource, caller: Caller, id: string) =>
  findInOrg(ds, KnowledgeBaseJob, caller.organizationId, { knowledge_base_job_id: id }, 'Knowledge base job');

export async function listJobs(
  ds: DataSource,
  caller: Caller,
  knowledgeBaseId: string,
  page: PageRequest,
  statuses?: KnowledgeBaseJobStatus[],
) {
  await findInOrg(ds, KnowledgeBase, caller.organizationId, { knowledge_base_id: knowledgeBaseId }, 'Knowledge base');
  return pageInOrg(
    ds,
    KnowledgeBaseJob,
    caller.organizationId,
    page,
    { knowledge_base_id: knowledgeBaseId, ...(statuses?.length ? { status: In(statuses) } : {}) },
    { created_at: 'DESC', knowledge_base_job_id: 'DESC' },
  );
}

/** A new QUEUED job with its workflow; 409 while another job of the knowledge base is open. */
export async function createJob(deps: JobDeps, caller: Caller, knowledgeBaseId: string): Promise<KnowledgeBaseJob> {
  const kb = await findInOrg(
    deps.ds,
    KnowledgeBase,
    caller.organizationId,
    { knowledge_base_id: knowledgeBaseId },
    'Knowledge base',
  );
  const now = new Date();
  const job: KnowledgeBaseJob = {
    knowledge_base_job_id: randomUUID(),
    knowledge_base_id: kb.knowledge_base_id,
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
  return insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: {
      kind: 'knowledge-base-job',
      id: job.knowledge_base_job_id,
      organizationId: caller.organizationId,
      summary: `Knowledge base job of ${kb.name} (${kb.knowledge_base_id})`,
    },
    insert: async (em) => {
      // Serializes job creation per knowledge base, so two requests cannot both find none open.
      await em.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`knowledge-base-job:${kb.knowledge_base_id}`]);
      const open = await em
        .getRepository(KnowledgeBaseJob)
        .findOneBy({ knowledge_base_id: kb.knowledge_base_id, status: In([...KNOWLEDGE_BASE_JOB.open]) });
      if (open)
        throw conflict(
          `Knowledge base job ${open.knowledge_base_job_id} of this knowledge base is still ${open.status}`,
        );
      return em.getRepository(KnowledgeBaseJob).save(job);
    },
    start: workflowStart.knowledgeBaseJob({
      jobId: job.knowledge_base_job_id,
      timeLimitSeconds: deps.config.knowledgeBaseJob.timeLimitSeconds,
      heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
    }),
  });
}

/** Cancels the job and answers once its workflow recorded the end (the job kernel's cancelAndWait). */
export async function cancelJob(deps: JobDeps, caller: Caller, id: string): Promise<KnowledgeBaseJob> {
  const job = await findJob(deps.ds, caller, id);
  return cancelAndWait(deps.temporal, KNOWLEDGE_BASE_JOB, job, {
    requestedBy: caller.actor,
    read: () => deps.ds.getRepository(KnowledgeBaseJob).findOneByOrFail({ knowledge_base_job_id: id }),
  });
}

/** Before a knowledge base is deleted: cancels its open jobs and waits (bounded) for their ends. */
export async function stopOpenJobs(
  deps: { ds: DataSource; temporal: Client },
  caller: Caller,
  knowledgeBaseId: string,
): Promise<void> {
  const open = await deps.ds
    .getRepository(KnowledgeBaseJob)
    .findBy({ knowledge_base_id: knowledgeBaseId, status: In([...KNOWLEDGE_BASE_JOB.open]) });
  await stopOpen(deps, KNOWLEDGE_BASE_JOB, open, caller.actor);
}

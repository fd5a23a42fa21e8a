// Knowledge base jobs: create (202, QUEUED), list under the knowledge base, get, cancel.
import type { KnowledgeBaseJob } from '../../persistence/entities/knowledge-base';
import { iso } from '../../persistence/scoped';
import { cancelJob, createJob, findJob, listJobs } from '../../services/knowledge/jobs';
import { route } from '../http/route';
import { idempotencyKeyField, presentIdempotencyKey } from './idempotency-fields';
import { defineSchema, nullableTimestamp, pageOf, timestamp, uuid } from '../schemas/registry';

const TAG = 'Knowledge bases';
const STATUSES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;

const JobSchema = defineSchema('KnowledgeBaseJob', {
  type: 'object',
  required: ['knowledge_base_job_id', 'knowledge_base_id', 'status', 'created_by', 'created_at'],
  properties: {
    knowledge_base_job_id: uuid,
    knowledge_base_id: uuid,
    status: { type: 'string', enum: STATUSES },
    status_detail: {},
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'message'],
        properties: { type: { type: 'string' }, message: { type: 'string' }, path: { type: 'string' } },
      },
    },
    bytes_ingested: { type: 'number' },
    idempotency_key: idempotencyKeyField,
    created_by: { type: 'string' },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
});

const present = (j: KnowledgeBaseJob) => ({
  knowledge_base_job_id: j.knowledge_base_job_id,
  knowledge_base_id: j.knowledge_base_id,
  status: j.status,
  ...(j.status_detail ? { status_detail: j.status_detail } : {}),
  errors: j.errors,
  bytes_ingested: j.bytes_ingested,
  ...presentIdempotencyKey(j),
  created_by: j.created_by,
  created_at: iso(j.created_at),
  completed_at: iso(j.completed_at),
});

const jobPath = { knowledge_base_job_id: uuid } as const;

route({
  operationId: 'CreateKnowledgeBaseJob',
  needsDiskSpace: true,
  method: 'post',
  path: '/knowledge-bases/{knowledge_base_id}/knowledge-base-jobs',
  tag: TAG,
  params: { knowledge_base_id: uuid },
  summary:
    'Starts a job that extracts, chunks, embeds and stores the assets the knowledge base covers (only what changed since the last job). 409 while another job of the knowledge base is open.',
  responses: { 202: { description: 'Knowledge base job (QUEUED)', schema: JobSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 202,
    body: present(await createJob(deps, caller, params.knowledge_base_id)),
  }),
  idempotent: async ({ deps, caller, record }) => ({
    status: 200,
    body: present(await findJob(deps.ds, caller, record.id)),
  }),
});

route({
  operationId: 'ListKnowledgeBaseJobs',
  method: 'get',
  path: '/knowledge-bases/{knowledge_base_id}/knowledge-base-jobs',
  tag: TAG,
  params: { knowledge_base_id: uuid },
  paged: true,
  query: {
    status: {
      type: 'array',
      items: { type: 'string', enum: STATUSES },
      maxItems: STATUSES.length,
      description: 'Only jobs in these statuses (`A,B` or repeated).',
    },
  },
  summary: "The knowledge base's jobs, newest first.",
  responses: {
    200: {
      description: 'Knowledge base jobs',
      schema: pageOf('KnowledgeBaseJobList', 'knowledge_base_jobs', JobSchema),
    },
  },
  handler: async ({ deps, caller, params, page, query }) => {
    const { items, pagination } = await listJobs(deps.ds, caller, params.knowledge_base_id, page, query.status);
    return { status: 200, body: { knowledge_base_jobs: items.map(present), pagination } };
  },
});

route({
  operationId: 'GetKnowledgeBaseJob',
  method: 'get',
  path: '/knowledge-base-jobs/{knowledge_base_job_id}',
  tag: TAG,
  params: jobPath,
  summary: 'A knowledge base job.',
  responses: { 200: { description: 'Knowledge base job', schema: JobSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await findJob(deps.ds, caller, params.knowledge_base_job_id)),
  }),
});

route({
  operationId: 'CancelKnowledgeBaseJob',
  method: 'post',
  path: '/knowledge-base-jobs/{knowledge_base_job_id}/cancel',
  tag: TAG,
  params: jobPath,
  summary:
    'Cancels the job and answers it once CANCELLED (bounded wait); an already cancelled job as is; 409 when it already ended otherwise.',
  responses: { 200: { description: 'Knowledge base job', schema: JobSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await cancelJob(deps, caller, params.knowledge_base_job_id)),
  }),
});

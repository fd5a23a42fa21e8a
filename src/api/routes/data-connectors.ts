// Data connectors (CRUD) and their data jobs (create 202, list, get, cancel). docs/data-connectors.md.
import type { DataConnector, DataJob } from '../../persistence/entities/data-connector';
import { iso } from '../../persistence/scoped';
import { presentConfig } from '../../services/data-connectors/config';
import {
  createDataConnector,
  deleteDataConnector,
  findDataConnector,
  listDataConnectors,
  updateDataConnector,
} from '../../services/data-connectors/connectors';
import { cancelDataJob, createDataJob, findDataJob, listDataJobs } from '../../services/data-connectors/jobs';
import { SCHEDULE_EXPRESSION_PATTERN, SCHEDULE_FORMS } from '../../temporal/user-schedules';
import { route } from '../http/route';
import { idempotencyKeyField, presentIdempotencyKey } from './idempotency-fields';
import { defineSchema, JsonSchema, nullableTimestamp, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Data connectors';
const STATUSES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const PORT = '(?::(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d\\d|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3}))?';
/** http(s), a host name (its last label starting with a letter) or an IPv4 address, an optional port, any path. */
const HTTP_URL = {
  type: 'string',
  maxLength: 2048,
  pattern: `^https?://(?:(?:${LABEL}\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|(?:${OCTET}\\.){3}${OCTET})${PORT}(?:[/?#][^\\s\\\\]*)?$`,
  description: 'An http(s) URL (host name or IPv4 address; no credentials).',
} as const;
const strings = (maxItems: number, item: JsonSchema = str(1, 1024)) => ({ type: 'array', maxItems, items: item });
const args = strings(100, str(0, 10_000));

const webscraper = {
  type: 'object',
  required: ['urls'],
  properties: {
    urls: { ...strings(100, HTTP_URL), minItems: 1 },
    max_depth: {
      type: 'integer',
      minimum: 0,
      maximum: 5,
      description: 'Follow same-site links this many levels deep (default 0: only `urls`).',
    },
    max_pages: { type: 'integer', minimum: 1, maximum: 1000, description: 'Pages per job at most (default 100).' },
  },
} as const;
const dataLake = {
  type: 'object',
  required: ['bucket_id'],
  properties: {
    bucket_id: uuid,
    asset_paths: {
      ...strings(100, str(1, 256)),
      description: 'Asset names, or prefixes ending in `/`, of that bucket; none: the whole bucket.',
    },
  },
} as const;
const structure = { type: 'object', required: ['structure_id'], properties: { structure_id: uuid, args } } as const;
const objstoreFields = (id: string, secret: string) => ({
  type: 'object',
  required: [id, secret, 'uris'],
  properties: {
    [id]: str(1, 200),
    [secret]: str(1, 1000),
    uris: { ...strings(100, str(1, 2048)), description: '`s3://bucket/key` or `s3://bucket/prefix/`.' },
  },
});
const drive = {
  type: 'object',
  required: ['auth_code', 'file_ids'],
  properties: { auth_code: str(1, 2000), file_ids: strings(100, str(1, 200)) },
} as const;
const wikiFields = (email: string, token: string) => ({
  type: 'object',
  required: [email, token, 'domain'],
  properties: { [email]: str(1, 254), [token]: str(1, 1000), domain: str(1, 253) },
});

/** Each type with the config member(s) it may have (the interface's word, and the provider's). */
const VARIANTS: Array<{ types: string[]; members: Record<string, JsonSchema> }> = [
  { types: ['webscraper'], members: { webscraper } },
  { types: ['data_lake'], members: { data_lake: dataLake } },
  { types: ['structure'], members: { structure } },
  {
    types: ['objstore', 's3'],
    members: {
      objstore: objstoreFields('objstore_access_key_id', 'objstore_secret_access_key'),
      s3: objstoreFields('aws_access_key_id', 'aws_secret_access_key'),
    },
  },
  { types: ['drive', 'google_drive'], members: { drive, google_drive: drive } },
  {
    types: ['wiki', 'confluence'],
    members: {
      wiki: wikiFields('wiki_email', 'wiki_api_token'),
      confluence: wikiFields('atlassian_email', 'atlassian_api_token'),
    },
  },
];

const configOf = (members: Record<string, JsonSchema>) => ({
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  properties: members,
});

const transforms = {
  type: 'array',
  maxItems: 10,
  items: {
    type: 'object',
    required: ['structure'],
    properties: { structure: { type: 'object', required: ['structure_id'], properties: { structure_id: uuid, args } } },
  },
  description:
    'Structures each fetched item passes through, in order: a run with the item (a TextArtifact as JSON) as first argument, then `args`; its output replaces the item.',
} as const;
const scheduleExpression = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: SCHEDULE_EXPRESSION_PATTERN,
  description: `Starts a job on this schedule (a Temporal Schedule; a job still open then is not doubled). ${SCHEDULE_FORMS}`,
} as const;
const common = {
  name: str(1, 200),
  description: str(1, 200),
  schedule_expression: scheduleExpression,
  transforms,
  bucket_id: {
    ...uuid,
    description:
      "The bucket the connector writes to, under `data-connectors/<data_connector_id>/`; default: the organization's default bucket.",
  },
} as const;

const CreateBody = defineSchema('CreateDataConnectorRequest', {
  type: 'object',
  required: ['name', 'type', 'config'],
  properties: { ...common, type: str(1, 200), config: { type: 'object' } },
  description: 'The config has exactly one member, named like the type (the interface or the provider word).',
  oneOf: VARIANTS.map((v) => ({
    properties: { type: { type: 'string', enum: v.types }, config: configOf(v.members) },
  })),
});

const UpdateBody = defineSchema('UpdateDataConnectorRequest', {
  type: 'object',
  properties: {
    ...common,
    schedule_expression: { anyOf: [scheduleExpression, { type: 'null' }], description: 'null removes the schedule.' },
    config: {
      ...configOf(Object.assign({}, ...VARIANTS.map((v) => v.members))),
      description:
        "A new config (its member named like the connector's type: 400 otherwise); stops an open job and starts a new one.",
    },
  },
});

const open = { type: 'object' } as const;
const DataConnectorSchema = defineSchema('DataConnector', {
  type: 'object',
  required: [
    'data_connector_id',
    'config',
    'created_at',
    'created_by',
    'name',
    'organization_id',
    'type',
    'updated_at',
  ],
  properties: {
    data_connector_id: uuid,
    name: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'string' },
    config: {
      type: 'object',
      description:
        "The member named like the type (wiki, drive and objstore also beside in the provider's words: confluence, google_drive, s3); secret fields are never answered (drive: `access_token` is empty).",
      properties: Object.fromEntries(
        ['webscraper', 'data_lake', 'structure', 'objstore', 'drive', 'wiki'].map((t) => [t, open]),
      ),
    },
    bucket_id: uuid,
    schedule_expression: { type: 'string' },
    transforms: { type: 'array', items: { type: 'object' } },
    data_job_id: { ...uuid, description: 'The job this create or config update started.' },
    organization_id: uuid,
    created_by: { type: 'string' },
    created_at: timestamp,
    updated_at: timestamp,
  },
});

const JobSchema = defineSchema('DataJob', {
  type: 'object',
  required: ['data_job_id', 'data_connector_id', 'status', 'created_by', 'created_at'],
  properties: {
    data_job_id: uuid,
    data_connector_id: uuid,
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

const present = (c: DataConnector, jobId?: string) => ({
  data_connector_id: c.data_connector_id,
  name: c.name,
  ...(c.description != null ? { description: c.description } : {}),
  type: c.type,
  config: presentConfig(c.type, c.config),
  bucket_id: c.bucket_id,
  ...(c.schedule_expression != null ? { schedule_expression: c.schedule_expression } : {}),
  transforms: c.transforms,
  ...(jobId ? { data_job_id: jobId } : {}),
  organization_id: c.organization_id,
  created_by: c.created_by,
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

const presentJob = (j: DataJob) => ({
  data_job_id: j.data_job_id,
  data_connector_id: j.data_connector_id,
  status: j.status,
  ...(j.status_detail ? { status_detail: j.status_detail } : {}),
  errors: j.errors,
  bytes_ingested: j.bytes_ingested,
  ...presentIdempotencyKey(j),
  created_by: j.created_by,
  created_at: iso(j.created_at),
  completed_at: iso(j.completed_at),
});

const connectorPath = { data_connector_id: uuid } as const;
const refsNote =
  "Buckets and structures it names must be the organization's (409 naming them otherwise); secrets are stored encrypted and never answered.";

route({
  operationId: 'ListDataConnectors',
  method: 'get',
  path: '/data-connectors',
  tag: TAG,
  paged: true,
  summary: "The organization's data connectors, newest first.",
  responses: {
    200: {
      description: 'Data connectors',
      schema: pageOf('DataConnectorList', 'data_connectors', DataConnectorSchema),
    },
  },
  handler: async ({ deps, caller, page }) => {
    const { items, pagination } = await listDataConnectors(deps.ds, caller, page);
    return { status: 200, body: { data_connectors: items.map((c) => present(c)), pagination } };
  },
});

route({
  operationId: 'CreateDataConnector',
  needsDiskSpace: true,
  method: 'post',
  path: '/data-connectors',
  tag: TAG,
  summary: `Creates a data connector and starts its first job (\`data_job_id\`). ${refsNote}`,
  body: CreateBody,
  bodyRequired: true,
  responses: { 201: { description: 'Data connector', schema: DataConnectorSchema } },
  handler: async ({ deps, caller, body }) => {
    // The schema is assembled from the types' variants at run time, so it has no static type: the service's
    // request type names what ajv checked.
    const { connector, job } = await createDataConnector(
      deps,
      caller,
      body as Parameters<typeof createDataConnector>[2],
    );
    return { status: 201, body: present(connector, job.data_job_id) };
  },
});

route({
  operationId: 'GetDataConnector',
  method: 'get',
  path: '/data-connectors/{data_connector_id}',
  tag: TAG,
  params: connectorPath,
  summary: 'A data connector.',
  responses: { 200: { description: 'Data connector', schema: DataConnectorSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: present(await findDataConnector(deps.ds, caller, params.data_connector_id)),
  }),
});

route({
  operationId: 'UpdateDataConnector',
  method: 'patch',
  path: '/data-connectors/{data_connector_id}',
  tag: TAG,
  params: connectorPath,
  summary: `Changes the given fields; a new config starts a job (\`data_job_id\`). ${refsNote}`,
  body: UpdateBody,
  responses: { 200: { description: 'Data connector', schema: DataConnectorSchema } },
  handler: async ({ deps, caller, params, body }) => {
    // The schema is assembled from the types' variants at run time, so it has no static type: the service's
    // request type names what ajv checked.
    const request = body as Parameters<typeof updateDataConnector>[3];
    const { connector, job } = await updateDataConnector(deps, caller, params.data_connector_id, request);
    return { status: 200, body: present(connector, job?.data_job_id) };
  },
});

route({
  operationId: 'DeleteDataConnector',
  method: 'delete',
  path: '/data-connectors/{data_connector_id}',
  tag: TAG,
  params: connectorPath,
  summary:
    'Deletes the data connector with its jobs (open ones cancelled first, bounded wait) and its schedule; the assets it wrote stay in the bucket.',
  responses: { 204: { description: 'Deleted' } },
  handler: async ({ deps, caller, params }) => {
    await deleteDataConnector(deps, caller, params.data_connector_id);
    return { status: 204 };
  },
});

route({
  operationId: 'CreateDataJob',
  needsDiskSpace: true,
  method: 'post',
  path: '/data-connectors/{data_connector_id}/data-jobs',
  tag: TAG,
  params: connectorPath,
  summary:
    "Starts a job that fetches the connector's items into its bucket (only what changed since the last job; removed items leave the bucket). 409 while another job of the connector is open.",
  responses: { 202: { description: 'Data job (QUEUED)', schema: JobSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 202,
    body: presentJob(await createDataJob(deps, caller, params.data_connector_id)),
  }),
  idempotent: async ({ deps, caller, record }) => ({
    status: 200,
    body: presentJob(await findDataJob(deps.ds, caller, record.id)),
  }),
});

route({
  operationId: 'ListDataJobs',
  method: 'get',
  path: '/data-connectors/{data_connector_id}/data-jobs',
  tag: TAG,
  params: connectorPath,
  paged: true,
  query: {
    status: {
      type: 'array',
      items: { type: 'string', enum: STATUSES },
      maxItems: STATUSES.length,
      description: 'Only jobs in these statuses (`A,B` or repeated).',
    },
  },
  summary: "The connector's jobs, newest first.",
  responses: { 200: { description: 'Data jobs', schema: pageOf('DataJobList', 'data_jobs', JobSchema) } },
  handler: async ({ deps, caller, params, page, query }) => {
    const { items, pagination } = await listDataJobs(deps.ds, caller, params.data_connector_id, page, query.status);
    return { status: 200, body: { data_jobs: items.map(presentJob), pagination } };
  },
});

route({
  operationId: 'GetDataJob',
  method: 'get',
  path: '/data-jobs/{data_job_id}',
  tag: TAG,
  params: { data_job_id: uuid },
  summary: 'A data job.',
  responses: { 200: { description: 'Data job', schema: JobSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentJob(await findDataJob(deps.ds, caller, params.data_job_id)),
  }),
});

route({
  operationId: 'CancelDataJob',
  method: 'post',
  path: '/data-jobs/{data_job_id}/cancel',
  tag: TAG,
  params: { data_job_id: uuid },
  summary:
    'Cancels the job and answers it once CANCELLED (bounded wait); an already cancelled job as is; 409 when it already ended otherwise.',
  responses: { 200: { description: 'Data job', schema: JobSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentJob(await cancelDataJob(deps, caller, params.data_job_id)),
  }),
});

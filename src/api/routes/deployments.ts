// Deployments of structures, functions and tools: list (with a status filter), create (202, possibly the
// existing deployment of the same source), read one, and cancel one.
import { DEPLOYMENT_STATUSES } from '../../persistence/entities/deployment';
import type { CodeResourceKind } from '../../persistence/entities/code-resource';
import { findCodeResource, KIND_LABEL } from '../../services/code/code-resources';
import {
  cancelDeployment,
  findDeployment,
  listDeployments,
  presentDeployment,
  requestDeployment,
} from '../../services/code/deployments';
import { neutralMember } from '../../services/provider-words';
import { route } from '../http/route';
import { defineSchema, nullableTimestamp, pageOf, str, timestamp, uuid } from '../schemas/registry';

const TAG = 'Deployments';

const DeploymentSchema = defineSchema('Deployment', {
  type: 'object',
  required: ['deployment_id', 'status', 'code_source', 'created_by', 'created_at'],
  properties: {
    deployment_id: uuid,
    structure_id: uuid,
    function_id: uuid,
    tool_id: uuid,
    status: {
      type: 'string',
      enum: [...DEPLOYMENT_STATUSES],
      description: 'QUEUED → DEPLOYING → SUCCEEDED | FAILED | ERROR.',
    },
    status_detail: {
      description:
        'QUEUED while waiting for an execution slot of its organization: `{reason: "WaitingForExecutionSlot", message, executing, limit, ahead}`; SUCCEEDED: `{reason: "Deployed", runtime, runtime_version?, interpreter_version}`. FAILED (the project does not build): ' +
        '`{reason, message, build_output_tail}` with reason SourceUnavailable, UnsafeArchive, InvalidArchive, CloneFailed, ConnectionUnavailable, ConfigNotFound, ' +
        'InvalidConfig, FileNotFound, ScriptFailed, InstallFailed, DiskQuotaExceeded (BUILD_DISK_MB) or CacheQuotaExceeded (BUILD_CACHE_MB). ERROR (the platform): `{reason, message}` with reason ' +
        'TimeLimitExceeded, InfrastructureError, WorkflowClosed or Cancelled (POST /deployments/{id}/cancel adds `requested_by`; ' +
        'there is no CANCELLED status).',
    },
    code_source: {
      type: 'object',
      description:
        'What was deployed: `{data_lake: {bucket_id, asset_path}}`, `{codehost: {commit_sha}}` (the commit checked out, once known; ' +
        "also as `github`, the provider's word the generated client parses) or `{default: {}}`.",
    },
    created_by: { type: 'string' },
    created_at: timestamp,
    completed_at: nullableTimestamp,
  },
});

const codehostSource = {
  type: 'object',
  additionalProperties: false,
  properties: {
    access_token: {
      ...str(1, 1000),
      description: 'Used for this clone only: never stored in plain text, never logged.',
    },
    commit_sha: {
      ...str(1, 200),
      description: 'Deploy this commit (full or abbreviated hexadecimal id) instead of the branch or tag head.',
    },
    connection_id: {
      ...uuid,
      description:
        "Clone with this connection's token (POST /connections), for this deployment only; 409 when the organization " +
        'has no such connection. `access_token` wins when both are given.',
    },
  },
} as const;

const CreateDeploymentRequest = defineSchema('CreateDeploymentRequest', {
  type: 'object',
  properties: {
    code_source: {
      type: 'object',
      additionalProperties: false,
      maxProperties: 1,
      properties: {
        codehost: codehostSource,
        github: {
          ...codehostSource,
          description: "The provider's word for `codehost` (griptape-cloud-client); the same.",
        },
      },
    },
    force: {
      type: 'boolean',
      description: 'Build even when the newest deployment that has not failed already deployed the same source.',
    },
  },
});

const statusFilter = {
  type: 'array',
  items: { type: 'string', enum: [...DEPLOYMENT_STATUSES] },
  description: 'Only deployments in these statuses: `status=A,B` or `status=A&status=B`.',
} as const;

for (const kind of ['structure', 'function', 'tool'] as CodeResourceKind[]) {
  const Label = KIND_LABEL[kind];
  const idParam = `${kind}_id`;
  const path = `/${kind}s/{${idParam}}/deployments`;

  route({
    operationId: `List${Label}Deployments`,
    method: 'get',
    path,
    tag: TAG,
    paged: true,
    params: { [idParam]: uuid },
    query: { status: statusFilter },
    summary: `Deployments of a ${kind}, newest first.`,
    responses: {
      200: { description: 'Deployments', schema: pageOf(`${Label}DeploymentList`, 'deployments', DeploymentSchema) },
    },
    handler: async ({ deps, caller, params, query, page }) => {
      const resource = await findCodeResource(deps.ds, caller, kind, params[idParam]);
      const { items, pagination } = await listDeployments(deps.ds, caller, resource, page, query.status);
      return { status: 200, body: { deployments: items.map(presentDeployment), pagination } };
    },
  });

  route({
    operationId: `Create${Label}Deployment`,
    needsDiskSpace: true,
    method: 'post',
    path,
    tag: TAG,
    params: { [idParam]: uuid },
    summary:
      `Deploys the ${kind}'s code. Without \`force\`, when the newest deployment that has not failed (QUEUED, DEPLOYING or SUCCEEDED) ` +
      'deploys the same source, that deployment is the answer and nothing is built: the same data-lake asset (same size and update time), ' +
      'the same git commit (compared only when `code_source.codehost.commit_sha` gives its full id: a branch head is known only by fetching it), ' +
      'the same config file. `code_source.codehost` applies to codehost code only.',
    body: CreateDeploymentRequest,
    responses: { 202: { description: 'The deployment (new or reused)', schema: DeploymentSchema } },
    handler: async ({ deps, caller, params, body }) => {
      const resource = await findCodeResource(deps.ds, caller, kind, params[idParam]);
      const { deployment } = await requestDeployment(deps, caller, resource, {
        ...body,
        code_source: neutralMember(body.code_source),
      });
      return { status: 202, body: presentDeployment(deployment) };
    },
  });
}

route({
  operationId: 'GetDeployment',
  method: 'get',
  path: '/deployments/{deployment_id}',
  tag: TAG,
  params: { deployment_id: uuid },
  summary: 'A deployment of a structure, function or tool.',
  responses: { 200: { description: 'Deployment', schema: DeploymentSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentDeployment(await findDeployment(deps.ds, caller, params.deployment_id)),
  }),
});

route({
  operationId: 'CancelDeployment',
  method: 'post',
  path: '/deployments/{deployment_id}/cancel',
  tag: TAG,
  params: { deployment_id: uuid },
  summary:
    'Cancels the deployment: its build\'s processes stop and it ends ERROR with status_detail `{reason: "Cancelled", ' +
    'message, requested_by}` (deployments have no CANCELLED status); answers it once ended (bounded wait), an already ' +
    'cancelled one as is, 409 when it already ended otherwise.',
  responses: { 200: { description: 'Deployment', schema: DeploymentSchema } },
  handler: async ({ deps, caller, params }) => ({
    status: 200,
    body: presentDeployment(await cancelDeployment(deps, caller, params.deployment_id)),
  }),
});

// Structures, functions and tools: one table (`kind`), one service. Creating one, or changing its code or
// config file, starts a deployment in the same transaction, so latest_deployment_id is always set.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DataSource, EntityManager } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { workflowStart } from '../../temporal/contracts';
import type { Caller } from '../caller';
import { badRequest, conflict, notFound } from '../../errors';
import { RESERVED_MCP_HEADERS } from '../../drivers/mcp/headers';
import type { PageRequest } from '../../persistence/pagination';
import { CodeResource } from '../../persistence/entities';
import type {
  ApprovalWebhook,
  CodeLocation,
  CodeResourceKind,
  Concurrency,
  EnvVar,
} from '../../persistence/entities/code-resource';
import { findOnePrepared } from '../../persistence/direct-sql';
import { assertIdsInOrg, assertSecretRefs, pageInOrg } from '../../persistence/scoped';
import { DeploymentsDeps, planDeployment, startPlannedDeployment } from './deployments';
import { OPEN_RUN_STATUSES, stopOpenRuns } from './runs/cancellation';
import { deleteSchedulesOf } from '../schedules/removal';
import { requestedPolicy } from './runs/retries';
import type { RetryPolicyRequest } from '../../temporal/retry-policy';
import { forgetDeleted } from '../../persistence/references';

export const KIND_LABEL: Record<CodeResourceKind, string> = {
  structure: 'Structure',
  function: 'Function',
  tool: 'Tool',
};

/** The request members shared by create and update (the config file under its kind's name, mapped by the route). */
export interface CodeResourceFields {
  name?: string;
  description?: string;
  code?: CodeLocation;
  env_vars?: EnvVar[];
  config_file?: string;
  webhook_enabled?: boolean;
  /** null: no limit (docs/run-control.md#concurrency-keys-and-limits). */
  concurrency?: Concurrency | null;
  /** Null removes it. */
  retry_policy?: RetryPolicyRequest | null;
  /** Tools only (the route offers them to tools). */
  requires_approval?: boolean;
  approval_timeout_seconds?: number | null;
  approval_webhook?: ApprovalWebhook | null;
}

export async function findCodeResource(
  ds: DataSource,
  caller: Caller,
  kind: CodeResourceKind,
  id: string,
): Promise<CodeResource> {
  const row = await findOnePrepared(ds, CodeResource, {
    resource_id: id,
    kind,
    organization_id: caller.organizationId,
  });
  if (!row) throw notFound(KIND_LABEL[kind]);
  return row;
}

export const listCodeResources = (ds: DataSource, caller: Caller, kind: CodeResourceKind, page: PageRequest) =>
  pageInOrg(ds, CodeResource, caller.organizationId, page, { kind }, { created_at: 'DESC', resource_id: 'DESC' });

/** `source` as sent (the old spec's MANUAL/SECRET_REF included), stored lowercase. */
const normalizeEnvVars = (vars: EnvVar[]) =>
  vars.map((v) => ({ name: v.name, value: v.value, source: (v.source ?? 'manual').toLowerCase() as EnvVar['source'] }));

/** An `mcp` location as stored: header sources lowercase; refused for structures and functions, and when unusable. */
function checkedCode(kind: CodeResourceKind, code: CodeLocation | undefined): CodeLocation | undefined {
  if (!code || !('mcp' in code)) return code;
  if (kind !== 'tool') throw badRequest(`Only a tool can name an MCP server; a ${kind} cannot`, '/body/code/mcp');
  let url: URL;
  try {
    url = new URL(code.mcp.url);
  } catch {
    throw badRequest('Not a URL', '/body/code/mcp/url');
  }
  if (url.username || url.password)
    throw badRequest('Credentials go in a header (a secret_ref), not in the URL', '/body/code/mcp/url');
  const headers = normalizeEnvVars(code.mcp.headers ?? []);
  for (const [i, h] of headers.entries()) {
    if (RESERVED_MCP_HEADERS.includes(h.name.toLowerCase()))
      throw badRequest(`${h.name} is set by the MCP transport itself`, `/body/code/mcp/headers/${i}/name`);
  }
  return { mcp: { url: url.href, headers } };
}

/** References must name records of the caller's organization, so a typo fails now rather than at deploy or run time. */
async function checkReferences(ds: DataSource, caller: Caller, fields: CodeResourceFields): Promise<void> {
  await assertSecretRefs(ds, caller.organizationId, fields.env_vars ?? [], '/body/env_vars');
  if (fields.code && 'mcp' in fields.code)
    await assertSecretRefs(ds, caller.organizationId, fields.code.mcp.headers, '/body/code/mcp/headers');
  if (fields.approval_webhook)
    await assertIdsInOrg(
      ds,
      'secret',
      caller.organizationId,
      [fields.approval_webhook.secret_id],
      '/body/approval_webhook/secret_id',
    );
  if (fields.code && 'data_lake' in fields.code) {
    await assertIdsInOrg(
      ds,
      'bucket',
      caller.organizationId,
      [fields.code.data_lake.bucket_id],
      '/body/code/data_lake/bucket_id',
    );
  }
  if (fields.code && 'codehost' in fields.code && fields.code.codehost.connection_id) {
    await assertIdsInOrg(
      ds,
      'connection',
      caller.organizationId,
      [fields.code.codehost.connection_id],
      '/body/code/codehost/connection_id',
    );
  }
}

/** Creates the resource and its first deployment (of `{default: {}}` when no code is given). */
export async function createCodeResource(
  deps: DeploymentsDeps,
  caller: Caller,
  kind: CodeResourceKind,
  fields: CodeResourceFields & { name: string },
) {
  const envVars = normalizeEnvVars(fields.env_vars ?? []);
  const code = checkedCode(kind, fields.code);
  await checkReferences(deps.ds, caller, { ...fields, code, env_vars: envVars });
  const now = new Date();
  const resource: CodeResource = {
    resource_id: randomUUID(),
    kind,
    organization_id: caller.organizationId,
    name: fields.name,
    description: fields.description ?? '',
    code: code ?? { default: {} },
    config_file: fields.config_file ?? null,
    env_vars: envVars,
    webhook_enabled: fields.webhook_enabled ?? false,
    retry_policy: fields.retry_policy ? requestedPolicy(fields.retry_policy, '/body/retry_policy') : null,
    latest_deployment_id: null,
    concurrency: fields.concurrency ?? null,
    queue_paused_at: null,
    requires_approval: fields.requires_approval ?? false,
    approval_timeout_seconds: fields.approval_timeout_seconds ?? null,
    approval_webhook: fields.approval_webhook ?? null,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  const plan = await planDeployment(deps, resource, caller.actor);
  await startPlannedDeployment(deps, resource, plan, (em) => em.getRepository(CodeResource).insert({ ...resource }));
  return resource;
}

/** Applies the given members; a `code` or config file member (even unchanged) starts a new deployment. */
export async function updateCodeResource(
  deps: DeploymentsDeps,
  caller: Caller,
  resource: CodeResource,
  fields: CodeResourceFields,
) {
  const envVars = fields.env_vars && normalizeEnvVars(fields.env_vars);
  const code = checkedCode(resource.kind, fields.code);
  // Its runs, deployments and assistants' functions mean different things: a new tool, not a changed one.
  if (code && 'mcp' in code !== 'mcp' in resource.code)
    throw conflict(
      `A tool cannot change between an MCP server and a code location (it is ${'mcp' in resource.code ? 'an MCP server' : 'code'}); create a new tool`,
    );
  await checkReferences(deps.ds, caller, { ...fields, code, env_vars: envVars });
  if (fields.name !== undefined) resource.name = fields.name;
  if (fields.description !== undefined) resource.description = fields.description;
  if (code !== undefined) resource.code = code;
  if (fields.config_file !== undefined) resource.config_file = fields.config_file;
  if (envVars !== undefined) resource.env_vars = envVars;
  if (fields.webhook_enabled !== undefined) resource.webhook_enabled = fields.webhook_enabled;
  if (fields.concurrency !== undefined) resource.concurrency = fields.concurrency;
  if (fields.requires_approval !== undefined) resource.requires_approval = fields.requires_approval;
  if (fields.approval_timeout_seconds !== undefined)
    resource.approval_timeout_seconds = fields.approval_timeout_seconds;
  if (fields.approval_webhook !== undefined) resource.approval_webhook = fields.approval_webhook;
  if (fields.retry_policy !== undefined)
    resource.retry_policy = requestedPolicy(fields.retry_policy, '/body/retry_policy');
  resource.updated_at = new Date();
  // latest_deployment_id is written only with a new deployment (a concurrent deploy must not be undone).
  // So is queue_paused_at, by pause and resume only.
  const { latest_deployment_id: _kept, resource_id: _id, queue_paused_at: _paused, ...changes } = resource;
  const save = (em: EntityManager) =>
    em.getRepository(CodeResource).update({ resource_id: resource.resource_id }, changes);
  if (fields.code === undefined && fields.config_file === undefined) {
    await save(deps.ds.manager);
    return resource;
  }
  const plan = await planDeployment(deps, resource, caller.actor);
  await startPlannedDeployment(deps, resource, plan, save);
  return resource;
}

/**
 * Deletes the resource with its deployments and runs (cascade); the assistants that name it (a structure, a
 * tool) no longer do, in the same transaction (src/persistence/references.ts). Open runs are stopped first (see
 * stopOpenRuns); the rows are deleted either way. Then its builds go, durably: the build-removal workflow
 * cancels a build in progress and removes every build directory (should it not start, the build cleanup
 * schedule removes them as orphans once BUILD_RETENTION_SECONDS have passed).
 */
export async function deleteCodeResource(
  deps: { ds: DataSource; temporal: Client; config: Config; log: Logger },
  caller: Caller,
  resource: CodeResource,
): Promise<void> {
  const open: Array<{ run_id: string; kind: CodeResourceKind }> = await deps.ds.query(
    `SELECT run_id, kind FROM runs WHERE resource_id = $1 AND status = ANY($2)`,
    [resource.resource_id, OPEN_RUN_STATUSES],
  );
  await stopOpenRuns(deps, caller, open);
  await deleteSchedulesOf(deps, resource.resource_id);
  const deployments: Array<{ deployment_id: string }> = await deps.ds.transaction(async (em) => {
    const rows = await em.query(`SELECT deployment_id FROM deployments WHERE resource_id = $1`, [resource.resource_id]);
    if (resource.kind === 'structure' || resource.kind === 'tool')
      await forgetDeleted(em, resource.kind, resource.organization_id, resource.resource_id);
    await em.getRepository(CodeResource).delete({ resource_id: resource.resource_id });
    return rows;
  });
  if (!deployments.length) return;
  const start = workflowStart.buildRemoval({
    resourceId: resource.resource_id,
    deploymentIds: deployments.map((d) => d.deployment_id),
  });
  try {
    await deps.temporal.workflow.start(start.type, {
      args: start.args,
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: `build-removal-${resource.resource_id}`,
      staticSummary: `Builds of deleted ${resource.kind} ${resource.name}`,
    });
  } catch (err) {
    deps.log.warn(
      { err, resourceId: resource.resource_id },
      'could not start the removal of the builds of a deleted resource',
    );
  }
}

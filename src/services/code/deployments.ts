// Deployments as the api sees them: each one is a row (QUEUED) plus a workflow (deployment-<uuid>) started
// together; the workflow's activities write every later status. A create-deployment request without
// `force` reuses the newest deployment that is not FAILED/ERROR when it deploys the same source. A cancel goes
// through the job kernel, like every job's.
import { createHash, randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DataSource, EntityManager, In } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { Caller } from '../caller';
import { badRequest, conflict } from '../../errors';
import { withProviderWords } from '../provider-words';
import type { PageRequest } from '../../persistence/pagination';
import type { Config } from '../../config';
import { Asset, CodeResource, Deployment } from '../../persistence/entities';
import type { CodeLocation, CodeResourceKind } from '../../persistence/entities/code-resource';
import type { DeploymentStatus } from '../../persistence/entities/deployment';
import { assertIdsInOrg, findInOrg, iso, pageInOrg } from '../../persistence/scoped';
import { DEFAULT_CONFIG_FILE } from '../../runtime/build/config-file';
import { DEFAULT_PROJECTS } from '../../runtime/templates/default-code';
import type { SecretBox } from '../../security/secret-box';
import { type DeploymentInput, workflowStart } from '../../temporal/contracts';
import { insertAndStart } from '../../jobs/create';
import { cancelAndWait } from '../../jobs/cancel';
import { DEPLOYMENT_JOB } from '../../jobs/kinds';
import { findOnePrepared } from '../../persistence/direct-sql';

export interface DeploymentsDeps {
  ds: DataSource;
  temporal: Client;
  config: Config;
  box: SecretBox;
}

export const presentDeployment = (d: Deployment) => ({
  deployment_id: d.deployment_id,
  [`${d.resource_kind}_id`]: d.resource_id,
  status: d.status,
  ...(d.status_detail != null ? { status_detail: d.status_detail } : {}),
  code_source: withProviderWords(d.code_source),
  created_by: d.created_by,
  created_at: iso(d.created_at),
  completed_at: iso(d.completed_at),
});

export const findDeployment = (ds: DataSource, caller: Caller, deploymentId: string) =>
  findInOrg(ds, Deployment, caller.organizationId, { deployment_id: deploymentId }, 'Deployment');

export const listDeployments = (
  ds: DataSource,
  caller: Caller,
  resource: CodeResource,
  page: PageRequest,
  statuses?: DeploymentStatus[],
) =>
  pageInOrg(
    ds,
    Deployment,
    caller.organizationId,
    page,
    { resource_id: resource.resource_id, ...(statuses?.length ? { status: In(statuses) } : {}) },
    { created_at: 'DESC', deployment_id: 'DESC' },
  );

/** The newest SUCCEEDED deployment of a resource: what a new run executes (its build_path has the manifest). */
export function latestSuccessfulDeployment(ds: DataSource, resourceId: string): Promise<Deployment | null> {
  return findOnePrepared(
    ds,
    Deployment,
    { resource_id: resourceId, status: 'SUCCEEDED' },
    { created_at: 'DESC', deployment_id: 'DESC' },
  );
}

/** The config file a deployment reads: the resource's, else the kind's default (always the default for `default` code). */
export const configFileOf = (resource: Pick<CodeResource, 'kind' | 'code' | 'config_file'>) =>
  'default' in resource.code || !resource.config_file ? DEFAULT_CONFIG_FILE[resource.kind] : resource.config_file;

/** What the deployed bytes depend on, when known: asset size and update time, or the git commit. */
export interface SourceEvidence {
  asset?: { size: number | null; updated_at: Date };
  commitSha?: string;
}

/**
 * One string that is equal for two deployments of the same source, or null when the source is not known
 * before fetching it (a branch head). The default project is hashed, so a platform upgrade redeploys.
 */
export function fingerprintOf(
  kind: CodeResourceKind,
  code: CodeLocation,
  configFile: string,
  evidence: SourceEvidence,
): string | null {
  let what: unknown;
  if ('mcp' in code) return null; // what the server offers is known only by asking it
  if ('default' in code)
    what = { default: createHash('sha256').update(JSON.stringify(DEFAULT_PROJECTS[kind])).digest('hex') };
  else if ('data_lake' in code) {
    if (!evidence.asset || evidence.asset.size === null) return null;
    what = {
      data_lake: code.data_lake,
      size: evidence.asset.size,
      updated_at: evidence.asset.updated_at.toISOString(),
    };
  } else {
    if (!evidence.commitSha) return null;
    what = {
      codehost: { owner: code.codehost.owner, name: code.codehost.name },
      commit: evidence.commitSha.toLowerCase(),
    };
  }
  return JSON.stringify({ kind, what, configFile });
}

export async function assetEvidence(
  ds: DataSource | EntityManager,
  organizationId: string,
  code: CodeLocation,
): Promise<SourceEvidence> {
  if (!('data_lake' in code)) return {};
  const asset = await ds.getRepository(Asset).findOneBy({
    bucket_id: code.data_lake.bucket_id,
    name: code.data_lake.asset_path,
    organization_id: organizationId,
  });
  return asset ? { asset: { size: asset.size, updated_at: asset.updated_at } } : {};
}

export interface DeploymentRequest {
  commitSha?: string;
  accessToken?: string;
  /** codehost: clone with this connection's token (checked to be the organization's) instead of the location's. */
  connectionId?: string;
}

/** A new QUEUED deployment row and its workflow input; nothing is written yet. */
export async function planDeployment(
  deps: DeploymentsDeps,
  resource: CodeResource,
  actor: string,
  req: DeploymentRequest = {},
) {
  const deploymentId = randomUUID();
  const configFile = configFileOf(resource);
  const evidence = {
    ...(await assetEvidence(deps.ds, resource.organization_id, resource.code)),
    commitSha: req.commitSha,
  };
  const now = new Date();
  const row: Deployment = {
    deployment_id: deploymentId,
    organization_id: resource.organization_id,
    resource_id: resource.resource_id,
    resource_kind: resource.kind,
    status: 'QUEUED',
    status_detail: null,
    code_source: requestedCodeSource(resource.code, req),
    build_path: null,
    source_fingerprint: fingerprintOf(resource.kind, resource.code, configFile, evidence),
    created_by: actor,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
  const input: DeploymentInput = {
    deploymentId,
    kind: resource.kind,
    // The build reads the connection from the code location: a request's own connection is put there.
    code:
      req.connectionId && 'codehost' in resource.code
        ? { codehost: { ...resource.code.codehost, connection_id: req.connectionId } }
        : resource.code,
    configFile,
    commitSha: req.commitSha,
    // Workflow inputs are kept in Temporal's history: the token travels sealed, bound to this deployment.
    sealedAccessToken: req.accessToken ? sealAccessToken(deps.box, deploymentId, req.accessToken) : undefined,
    timeLimitSeconds: deps.config.deploymentJob.timeLimitSeconds,
    heartbeatTimeoutSeconds: deps.config.runProcess.heartbeatTimeoutSeconds,
  };
  return { row, input };
}

const tokenBinding = (deploymentId: string) => `deployment-access-token:${deploymentId}`;
export const sealAccessToken = (box: SecretBox, deploymentId: string, token: string) =>
  box.seal(token, tokenBinding(deploymentId)).toString('base64');
export const openAccessToken = (box: SecretBox, deploymentId: string, sealed: string) =>
  box.open(Buffer.from(sealed, 'base64'), tokenBinding(deploymentId));

/** code_source until the build records what it fetched (the resolved commit, for codehost). */
function requestedCodeSource(code: CodeLocation, req: DeploymentRequest): Record<string, unknown> {
  if ('data_lake' in code)
    return { data_lake: { bucket_id: code.data_lake.bucket_id, asset_path: code.data_lake.asset_path } };
  if ('codehost' in code) return { codehost: req.commitSha ? { commit_sha: req.commitSha } : {} };
  if ('mcp' in code) return { mcp: { url: code.mcp.url } };
  return { default: {} };
}

/**
 * Writes the plan's row (after `before`, e.g. inserting the resource), points the resource's
 * latest_deployment_id at it, and starts its workflow, in one transaction (see insertAndStart).
 */
export async function startPlannedDeployment(
  deps: DeploymentsDeps,
  resource: CodeResource,
  plan: Awaited<ReturnType<typeof planDeployment>>,
  before: (em: EntityManager) => Promise<unknown> = async () => undefined,
): Promise<Deployment> {
  return insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.config.temporal.taskQueue,
    resource: {
      kind: 'deployment',
      id: plan.row.deployment_id,
      organizationId: resource.organization_id,
      summary: `Deployment of ${resource.kind} ${resource.name}`,
    },
    insert: async (em) => {
      await before(em);
      await em.getRepository(Deployment).insert(plan.row as QueryDeepPartialEntity<Deployment>);
      await em
        .getRepository(CodeResource)
        .update({ resource_id: resource.resource_id }, { latest_deployment_id: plan.row.deployment_id });
      resource.latest_deployment_id = plan.row.deployment_id;
      return plan.row;
    },
    start: workflowStart.deployment(plan.input),
  });
}

/**
 * CreateStructureDeployment and friends. Without `force`, when the newest deployment that has not failed
 * (QUEUED, DEPLOYING or SUCCEEDED) deploys the same source, that deployment is the answer and nothing is
 * built. A branch head is only known by fetching it, so codehost sources are compared only when the
 * request names `commit_sha` (builds record the full id, so an abbreviated one never matches).
 */
export async function requestDeployment(
  deps: DeploymentsDeps,
  caller: Caller,
  resource: CodeResource,
  body: {
    code_source?: { codehost?: { access_token?: string; commit_sha?: string; connection_id?: string } };
    force?: boolean;
  },
): Promise<{ deployment: Deployment; reused: boolean }> {
  const codehost = body.code_source?.codehost;
  if (codehost && !('codehost' in resource.code)) {
    // The request is well formed; the resource's code location makes it inapplicable.
    throw conflict(`code_source.codehost applies only to a ${resource.kind} whose code is a codehost repository`);
  }
  if (codehost?.connection_id) {
    await assertIdsInOrg(
      deps.ds,
      'connection',
      caller.organizationId,
      [codehost.connection_id],
      '/body/code_source/codehost/connection_id',
    );
  }
  const plan = await planDeployment(deps, resource, caller.actor, {
    commitSha: codehost?.commit_sha,
    accessToken: codehost?.access_token,
    connectionId: codehost?.connection_id,
  });
  if (!body.force && plan.row.source_fingerprint !== null) {
    const newest = await deps.ds.getRepository(Deployment).findOne({
      where: { resource_id: resource.resource_id, status: In(['QUEUED', 'DEPLOYING', 'SUCCEEDED']) },
      order: { created_at: 'DESC', deployment_id: 'DESC' },
    });
    if (newest && newest.source_fingerprint === plan.row.source_fingerprint)
      return { deployment: newest, reused: true };
  }
  return { deployment: await startPlannedDeployment(deps, resource, plan), reused: false };
}

/**
 * Cancels the deployment (its build's processes stop) and answers once its workflow recorded the end (the job
 * kernel's cancelAndWait): ERROR with reason Cancelled, deployments having no CANCELLED status. Already
 * cancelled: answered as is; ended otherwise: 409.
 */
export async function cancelDeployment(
  deps: Pick<DeploymentsDeps, 'ds' | 'temporal'>,
  caller: Caller,
  deploymentId: string,
): Promise<Deployment> {
  const deployment = await findDeployment(deps.ds, caller, deploymentId);
  return cancelAndWait(deps.temporal, DEPLOYMENT_JOB, deployment, {
    requestedBy: caller.actor,
    read: () => deps.ds.getRepository(Deployment).findOneByOrFail({ deployment_id: deploymentId }),
  });
}

// Worker Versioning (Temporal's Worker Deployments): the version a worker polls as, from WORKER_BUILD_ID and
// WORKER_DEPLOYMENT_NAME, and the routing calls of an upgrade (docs/production.md, Upgrades). A versioned
// worker's workflows are PINNED: each runs to its end on the build that started it, so a build whose workflow
// code changed never replays another build's history. New workflows go to the deployment's current version:
// a worker sets its own version current only when the deployment has none (the first install); afterwards the
// operator promotes a new build once its workers poll (`temporal worker deployment set-current-version`).
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../config';
import type { Logger } from '../logger';

// temporal.api.enums.v1.WorkerDeploymentVersionStatus and VersionDrainageStatus (the proto package is not ours).
const VERSION_STATUS = ['UNSPECIFIED', 'INACTIVE', 'CURRENT', 'RAMPING', 'DRAINING', 'DRAINED'] as const;
const DRAINAGE_STATUS = ['UNSPECIFIED', 'DRAINING', 'DRAINED'] as const;
const NOT_FOUND = 5; // gRPC status
const FAILED_PRECONDITION = 9;
const ABORTED = 10;
const ROUTING_UPDATE_IN_PROGRESS = 1; // temporal.api.enums.v1.RoutingConfigUpdateState

export type VersionStatus = (typeof VERSION_STATUS)[number];

/** The worker's version, when WORKER_BUILD_ID is set; undefined: an unversioned worker. */
export function workerVersionOf(config: Config): WorkerDeploymentVersion | undefined {
  const { workerBuildId, workerDeploymentName } = config.temporal;
  return workerBuildId ? { deploymentName: workerDeploymentName, buildId: workerBuildId } : undefined;
}

/** The Worker's deployment options: a versioned worker's workflows stay on the build that started them. */
export function workerDeploymentOptions(config: Config): WorkerOptions['workerDeploymentOptions'] {
  const version = workerVersionOf(config);
  return version ? { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } : undefined;
}

/** `tarmac:<build>`, as the CLI and the Temporal UI name a version. */
export const versionName = (v: WorkerDeploymentVersion) => `${v.deploymentName}:${v.buildId}`;

interface Deployment {
  /** The build new workflows go to; undefined: none (unversioned workers take them). */
  currentBuildId: string | undefined;
  /** Builds that have polled. */
  buildIds: string[];
  /** False while a routing change is still reaching the task queues. */
  routingSettled: boolean;
  conflictToken: Uint8Array | undefined;
}

/** The deployment's routing; a deployment no worker has polled yet has no version at all. */
export async function describeDeployment(
  client: Client,
  namespace: string,
  deploymentName: string,
): Promise<Deployment> {
  try {
    const { workerDeploymentInfo: info, conflictToken } = await client.workflowService.describeWorkerDeployment({
      namespace,
      deploymentName,
    });
    return {
      currentBuildId: info?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined,
      buildIds: (info?.versionSummaries ?? []).map((s) => s.deploymentVersion?.buildId ?? '').filter(Boolean),
      routingSettled: enumName(['', 'IN_PROGRESS'], info?.routingConfigUpdateState) !== 'IN_PROGRESS',
      conflictToken: conflictToken ?? undefined,
    };
  } catch (err) {
    if ((err as { code?: number }).code === NOT_FOUND)
      return { currentBuildId: undefined, buildIds: [], routingSettled: true, conflictToken: undefined };
    throw err;
  }
}

/** Waits until `version` has polled (a version exists for Temporal once one of its workers polls). */
async function whenPolled(client: Client, namespace: string, version: WorkerDeploymentVersion, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await describeDeployment(client, namespace, version.deploymentName);
    if (d.buildIds.includes(version.buildId)) return d;
    if (Date.now() > deadline)
      throw new Error(`version ${versionName(version)} has not polled within ${timeoutMs} ms: are its workers up?`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Makes `version` the current one (new workflows start on it), once its workers poll, and waits until the
 * routing has reached the task queues. `onlyIfNone`: only when the deployment has no current version (the
 * first install); answers whether `version` is current now.
 */
export async function setCurrentVersion(
  client: Client,
  namespace: string,
  version: WorkerDeploymentVersion,
  opts: { onlyIfNone?: boolean; timeoutMs?: number; identity?: string } = {},
): Promise<boolean> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ;) {
    const d = await whenPolled(client, namespace, version, timeoutMs);
    if (d.currentBuildId === version.buildId && d.routingSettled) return true;
    if (d.currentBuildId === version.buildId) {
      if (Date.now() > deadline)
        throw new Error(`the routing to ${versionName(version)} did not settle in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    if (opts.onlyIfNone && d.currentBuildId !== undefined) return false;
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        conflictToken: d.conflictToken,
        identity: opts.identity,
      });
    } catch (err) {
      // Another caller changed the routing since our describe (two workers of a first install): look again.
      const code = (err as { code?: number }).code;
      if (attempt >= 5 || (code !== FAILED_PRECONDITION && code !== ABORTED)) throw err;
      attempt++;
    }
  }
}

/**
 * A first install's worker makes its own version current; any later build waits for the operator's
 * promotion. Logs which, with the command that promotes it.
 */
export async function promoteFirstVersion(client: Client, config: Config, log: Logger): Promise<void> {
  const version = workerVersionOf(config);
  if (!version) return;
  const current = await setCurrentVersion(client, config.temporal.namespace, version, {
    onlyIfNone: true,
    identity: `tarmac-worker ${process.pid}`,
  });
  const at = { version: versionName(version), current };
  if (current) log.info(at, 'worker version is current: new workflows start on it');
  else
    log.info(
      at,
      `worker version polls, not current: promote it with temporal worker deployment set-current-version ` +
        `--deployment-name ${version.deploymentName} --build-id ${version.buildId}`,
    );
}

/** Where a version stands: CURRENT, DRAINING (open workflows pinned to it), DRAINED, INACTIVE... */
export async function versionStatus(
  client: Client,
  namespace: string,
  version: WorkerDeploymentVersion,
): Promise<{ status: VersionStatus; drainage: (typeof DRAINAGE_STATUS)[number] }> {
  const { workerDeploymentVersionInfo: info } = await client.workflowService.describeWorkerDeploymentVersion({
    namespace,
    deploymentVersion: version,
  });
  return {
    status: enumName(VERSION_STATUS, info?.status),
    drainage: enumName(DRAINAGE_STATUS, info?.drainageInfo?.status),
  };
}

/** An enum value's short name, whether the message carries its number or its full name. */
function enumName<T extends string>(names: readonly T[], value: unknown): T {
  if (typeof value === 'string') return names.find((n) => value.endsWith(`_${n}`)) ?? names[0];
  return names[Number(value ?? 0)] ?? names[0];
}

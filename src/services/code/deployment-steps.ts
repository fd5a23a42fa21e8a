// The worker's side of a deployment's status (workflows/deployment.ts): the deployment to build and the
// terminal write through the guarded transition (runs/state.ts); its start is the kernel's (src/jobs/start.ts). The build itself (src/runtime/build/) runs in the activity.
import type { DataSource } from 'typeorm';
import { Deployment, DEPLOYMENT_TERMINAL } from '../../persistence/entities/deployment';
import { transitionDeployment } from './runs/state';
import type { DeploymentOutcome } from '../../temporal/contracts';

export type { DeploymentOutcome };

/** The deployment to build, unless it is gone or already ended. */
export async function openDeployment(ds: DataSource, deploymentId: string): Promise<Deployment | undefined> {
  const row = await ds.getRepository(Deployment).findOneBy({ deployment_id: deploymentId });
  return row && !DEPLOYMENT_TERMINAL.includes(row.status) ? row : undefined;
}

const artifactColumns = (outcome: DeploymentOutcome & { status: 'SUCCEEDED' }) =>
  outcome.artifact
    ? {
        build_artifact_key: outcome.artifact.key,
        build_sha256: outcome.artifact.sha256,
        build_artifact_bytes: String(outcome.artifact.size),
      }
    : {};

/** The terminal write (idempotent, with the source's fingerprint on success); answers the row after it. */
export async function finishDeployment(
  ds: DataSource,
  deploymentId: string,
  outcome: DeploymentOutcome,
): Promise<Deployment | null> {
  await ds.transaction(async (em) => {
    const done = await transitionDeployment(em, deploymentId, outcome.status, {
      status_detail: outcome.detail,
      completed_at: new Date(),
      ...(outcome.codeSource ? { code_source: outcome.codeSource } : {}),
      ...(outcome.status === 'SUCCEEDED' ? { build_path: outcome.buildPath, ...artifactColumns(outcome) } : {}),
    });
    if (done && outcome.status === 'SUCCEEDED') {
      await em.query(`UPDATE deployments SET source_fingerprint = $2 WHERE deployment_id = $1`, [
        deploymentId,
        outcome.fingerprint,
      ]);
    }
  });
  return ds.getRepository(Deployment).findOneBy({ deployment_id: deploymentId });
}

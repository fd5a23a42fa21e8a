// Which build directories no run can use any more (activities/build-cleanup.ts removes them): the rules are
// here, in SQL, so that the decision and the guard against open runs read the same rows.
import type { DataSource } from 'typeorm';

/**
 * Per deployment id that has a row: may its build go? Terminal, not its resource's latest success, done for
 * the grace period, and its successor done for the grace period too. Ids without a row are absent.
 */
export async function removableBuilds(
  ds: DataSource,
  deploymentIds: string[],
  graceSeconds: number,
): Promise<Map<string, boolean>> {
  const rows: Array<{ deployment_id: string; removable: boolean }> = await ds.query(
    `SELECT d.deployment_id, ${REMOVABLE} AS removable ${WITH_LATEST} WHERE d.deployment_id = ANY($1::uuid[])`,
    [deploymentIds, graceSeconds],
  );
  return new Map(rows.map((r) => [r.deployment_id, r.removable]));
}

/**
 * Deployments whose build artifact (in the blob store) may go by the same rules, wherever their directories
 * are: workers with disks of their own hold copies the cleaning worker never sees (theirs are evicted by
 * their local build caches). At most `limit`, oldest first.
 */
export async function removableArtifacts(ds: DataSource, graceSeconds: number, limit = 500): Promise<string[]> {
  const rows: Array<{ deployment_id: string }> = await ds.query(
    `SELECT d.deployment_id ${WITH_LATEST}
      WHERE d.build_artifact_key IS NOT NULL AND d.build_path IS NOT NULL AND ${REMOVABLE}
      ORDER BY d.completed_at LIMIT $1`,
    [limit, graceSeconds],
  );
  return rows.map((r) => r.deployment_id);
}

/** Terminal, not its resource's latest success, done for the grace period ($2), its successor too. */
const REMOVABLE = `(
         d.status IN ('SUCCEEDED', 'FAILED', 'ERROR')
         AND d.completed_at < now() - make_interval(secs => $2)
         AND latest.deployment_id IS DISTINCT FROM d.deployment_id
         AND (latest.completed_at IS NULL OR latest.completed_at < now() - make_interval(secs => $2))
       )`;

/** Each deployment `d` with `latest`, its resource's latest SUCCEEDED deployment. */
const WITH_LATEST = `FROM deployments d
       LEFT JOIN LATERAL (
         SELECT l.deployment_id, l.completed_at FROM deployments l
          WHERE l.resource_id = d.resource_id AND l.status = 'SUCCEEDED'
          ORDER BY l.created_at DESC, l.deployment_id DESC LIMIT 1
       ) latest ON true`;

/**
 * Forgets the build of a deployment, guarded: no open run may reference it and it is not its resource's
 * latest success. A run starting later finds build_path NULL and ends BuildUnavailable instead of failing
 * on a half-removed directory. False when the build must stay.
 */
export async function releaseBuild(ds: DataSource, deploymentId: string): Promise<boolean> {
  const released: unknown[][] | unknown[] = await ds.query(
    `UPDATE deployments SET build_path = NULL
      WHERE deployment_id = $1
        AND NOT EXISTS (SELECT 1 FROM runs WHERE deployment_id = $1 AND status IN ('QUEUED', 'STARTING', 'RUNNING'))
        AND deployment_id IS DISTINCT FROM (
          SELECT l.deployment_id FROM deployments l, deployments me
           WHERE me.deployment_id = $1 AND l.resource_id = me.resource_id AND l.status = 'SUCCEEDED'
           ORDER BY l.created_at DESC, l.deployment_id DESC LIMIT 1)
      RETURNING deployment_id`,
    [deploymentId],
  );
  const affected = Array.isArray(released[0]) ? (released[0] as unknown[]).length : released.length;
  return affected > 0;
}

/** Of `deploymentIds`, those an open run (STARTING or RUNNING, on any worker) uses: their builds stay. */
export async function deploymentsInUse(ds: DataSource, deploymentIds: string[]): Promise<Set<string>> {
  const rows: Array<{ deployment_id: string }> = await ds.query(
    `SELECT DISTINCT deployment_id FROM runs WHERE deployment_id = ANY($1::uuid[]) AND status IN ('STARTING', 'RUNNING')`,
    [deploymentIds],
  );
  return new Set(rows.map((r) => r.deployment_id));
}

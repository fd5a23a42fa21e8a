import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { isUuid } from '../src/ids';
import { removeTree, trimCache } from '../src/runtime/build/package-cache';
import { buildBlobPrefix } from '../src/blobs/keys';
import { releaseBuild, removableArtifacts, removableBuilds } from '../src/services/code/build-retention';
import { workflowIdOf, type BuildCleanupOutcome, type BuildRemovalOutcome } from '../src/temporal/contracts';

/** How long a deleted resource's build in progress may take to stop once cancelled. */
const BUILD_STOP_WAIT_MS = 60_000;

/** Bytes under `dir` (files and symlinks themselves, not what links point at). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += await sizeOf(p);
    else total += (await fs.lstat(p).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/**
 * Removes build directories (`<BUILD_DIR>/<deployment_id>`) no run can use any more. Kept: the build of each
 * resource's latest SUCCEEDED deployment (what new runs pick), builds an open run references, builds of
 * deployments still QUEUED/DEPLOYING, `.cache` and anything not named like a deployment id. Removed, once
 * past the grace period: builds of superseded, FAILED and ERROR deployments, and directories whose
 * deployment row is gone. A superseded build waits until its successor has also been done for the grace
 * period, so a run that read "latest" just before the successor finished is long inserted by then.
 * A build's artifact in the blob store goes with it, and so do the artifacts of removable builds that have no
 * directory here (built and run on workers with disks of their own).
 */
export function createBuildCleanupActivities(deps: ActivityDeps) {
  return {
    async cleanBuilds(input: { retentionSeconds?: number }): Promise<BuildCleanupOutcome> {
      const graceSeconds = input.retentionSeconds ?? deps.config.buildRetentionSeconds;
      const { buildDir } = deps.config;
      const names = (await fs.readdir(buildDir, { withFileTypes: true }).catch(() => []))
        .filter((e) => e.isDirectory() && isUuid(e.name))
        .map((e) => e.name.toLowerCase());
      const result: BuildCleanupOutcome = { removed: 0, bytes: 0, orphans: 0, kept: 0 };
      // Artifacts of builds no directory here holds: released (guarded), then deleted from the blob store.
      const local = new Set(names);
      for (const id of await removableArtifacts(deps.ds, graceSeconds)) {
        if (local.has(id) || !(await releaseBuild(deps.ds, id))) continue;
        await deps.blobs.deletePrefix(buildBlobPrefix(id));
        result.removed++;
      }
      if (!names.length) return result;

      // Per directory: does its row exist, and may its build go (terminal, not the latest success, aged out)?
      const byId = await removableBuilds(deps.ds, names, graceSeconds);
      const cutoff = Date.now() - graceSeconds * 1000;

      for (const id of names) {
        const dir = path.join(buildDir, id);
        let orphan = false;
        if (!byId.has(id)) {
          // No row: its resource was deleted (rows cascade) -- or a row is being inserted right now, so wait
          // out the grace period on the directory itself.
          const stat = await fs.stat(dir).catch(() => null);
          if (!stat || stat.mtimeMs >= cutoff) {
            result.kept++;
            continue;
          }
          orphan = true;
        } else if (!byId.get(id)) {
          result.kept++;
          continue;
        } else {
          // Forget the build first, guarded (no open run may reference it), then remove it.
          if (!(await releaseBuild(deps.ds, id))) {
            result.kept++;
            continue;
          }
        }
        const bytes = await sizeOf(dir);
        await deps.builds.forget(id);
        await deps.blobs.deletePrefix(buildBlobPrefix(id));
        result.removed++;
        result.bytes += bytes;
        if (orphan) result.orphans++;
      }
      if (result.removed) deps.log.info({ ...result, buildDir }, 'removed unused build directories');
      await trimCaches(deps);
      return result;
    },

    /**
     * The builds of a deleted resource (its rows are gone): a build in progress is cancelled (its workflow
     * kills the build's processes) and waited for, then every directory goes. Idempotent.
     */
    async removeBuilds(input: { deploymentIds: string[] }): Promise<BuildRemovalOutcome> {
      const ctx = Context.current();
      let removed = 0;
      let cancelled = 0;
      for (const id of input.deploymentIds) {
        ctx.heartbeat();
        const handle = deps.temporal.workflow.getHandle(workflowIdOf('deployment', id));
        const running = await handle.describe().then(
          (d) => d.status.name === 'RUNNING',
          () => false, // never started, or no longer known: nothing to stop
        );
        if (running) {
          await handle.cancel();
          cancelled++;
          const stopped = handle.result().catch(() => undefined);
          await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, BUILD_STOP_WAIT_MS).unref())]);
        }
        if (!isUuid(id)) continue;
        await deps.blobs.deletePrefix(buildBlobPrefix(id.toLowerCase()));
        const dir = path.join(deps.config.buildDir, id.toLowerCase());
        if (!(await fs.lstat(dir).catch(() => null))) continue;
        await deps.builds.forget(id.toLowerCase());
        await removeTree(dir);
        removed++;
      }
      if (removed || cancelled) deps.log.info({ removed, cancelled }, "removed a deleted resource's builds");
      return { removed, cancelled };
    },
  };
}

/** Every organization's package cache (SANDBOX=off: the one shared cache), trimmed to BUILD_CACHE_MB. */
async function trimCaches(deps: ActivityDeps): Promise<void> {
  const root = path.join(deps.config.buildDir, '.cache');
  const caches = deps.sandbox.enabled
    ? (await fs.readdir(root, { withFileTypes: true }).catch(() => []))
        .filter((e) => e.isDirectory())
        .map((e) => path.join(root, e.name))
    : [root];
  for (const dir of caches) {
    const bytes = await trimCache(dir, deps.config.buildQuota.cacheBytes);
    if (bytes) deps.log.info({ dir, bytes }, 'trimmed a package cache to BUILD_CACHE_MB');
  }
}

// The build cleanup removes build directories no run can use any more, on real directories under the
// stack's BUILD_DIR, with the default grace period (rows and directories are dated two hours back), and the
// builds' artifacts in the stack's blob store.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { buildArtifactKey } from '../../src/blobs/keys';
import { CodeResource, Deployment, Run } from '../../src/persistence/entities';
import type { DeploymentStatus } from '../../src/persistence/entities/deployment';
import { getStack, newTenant } from '../harness/stack';
import { aRun } from '../harness/runs';

const past = new Date(Date.now() - 2 * 3600_000);
const PAYLOAD = 'x'.repeat(4096);

function makeDir(name: string, old = true): string {
  const dir = path.join(getStack().config.buildDir, name);
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'payload.txt'), PAYLOAD);
  if (old) fs.utimesSync(dir, past, past);
  return dir;
}

async function resource(organizationId: string): Promise<string> {
  const resourceId = randomUUID();
  await getStack()
    .ds.getRepository(CodeResource)
    .save({
      resource_id: resourceId,
      kind: 'structure',
      organization_id: organizationId,
      name: 's',
      description: '',
      code: { default: {} },
      config_file: null,
      env_vars: [],
      webhook_enabled: false,
      latest_deployment_id: null,
      created_by: 'test',
      created_at: past,
      updated_at: past,
    });
  return resourceId;
}

/** A deployment created `minutesIn` after `past`, completed then (or now, when `recent`), with its directory. */
async function deployment(
  organizationId: string,
  resourceId: string,
  status: DeploymentStatus,
  minutesIn: number,
  recent = false,
) {
  const deploymentId = randomUUID();
  const dir = makeDir(deploymentId);
  const at = new Date(past.getTime() + minutesIn * 60_000);
  await getStack()
    .ds.getRepository(Deployment)
    .save({
      deployment_id: deploymentId,
      organization_id: organizationId,
      resource_id: resourceId,
      resource_kind: 'structure',
      status,
      status_detail: null,
      code_source: { default: {} },
      build_path: status === 'SUCCEEDED' ? dir : null,
      created_by: 'test',
      created_at: at,
      updated_at: at,
      completed_at: status === 'DEPLOYING' ? null : recent ? new Date() : at,
    });
  return { deploymentId, dir };
}

describe('build cleanup', () => {
  it('removes superseded, failed and orphaned builds past the grace period, and keeps every build still usable', async () => {
    const t = await newTenant();
    const { ds, env, config } = getStack();
    const org = t.organizationId;

    const a = await resource(org);
    const superseded = await deployment(org, a, 'SUCCEEDED', 1);
    const failed = await deployment(org, a, 'FAILED', 2);
    const withOpenRun = await deployment(org, a, 'SUCCEEDED', 3);
    const latest = await deployment(org, a, 'SUCCEEDED', 4);
    await ds.getRepository(Run).save(
      aRun(
        {
          run_id: randomUUID(),
          kind: 'structure',
          organization_id: org,
          resource_id: a,
          deployment_id: withOpenRun.deploymentId,
          created_by: 'test',
        },
        past,
      ),
    );

    const b = await resource(org);
    const justSuperseded = await deployment(org, b, 'SUCCEEDED', 1); // its successor finished within the grace period
    await deployment(org, b, 'SUCCEEDED', 2, true);
    const recentError = await deployment(org, b, 'ERROR', 3, true);
    const inProgress = await deployment(org, b, 'DEPLOYING', 4);

    const orphan = makeDir(randomUUID());
    const freshOrphan = makeDir(randomUUID(), false);
    const cacheFile = path.join(config.buildDir, '.cache', 'pip', `keep-${randomUUID()}`);
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
    fs.writeFileSync(cacheFile, 'cached wheel');
    const notABuild = makeDir(`notes-${randomUUID()}`);

    const result = await env.client.workflow.execute('buildCleanupWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `build-cleanup-${randomUUID()}`,
      args: [{}],
    });

    for (const gone of [superseded.dir, failed.dir, orphan]) expect(fs.existsSync(gone), gone).to.equal(false);
    for (const kept of [
      withOpenRun.dir,
      latest.dir,
      justSuperseded.dir,
      recentError.dir,
      inProgress.dir,
      freshOrphan,
      notABuild,
      cacheFile,
    ]) {
      expect(fs.existsSync(kept), kept).to.equal(true);
    }
    expect(result.removed).to.be.at.least(3);
    expect(result.orphans).to.be.at.least(1);
    expect(result.bytes).to.be.at.least(3 * PAYLOAD.length);

    // The removed build is forgotten by its row; the builds kept still have theirs.
    const row = (id: string) => ds.getRepository(Deployment).findOneByOrFail({ deployment_id: id });
    expect((await row(superseded.deploymentId)).build_path).to.equal(null);
    expect((await row(latest.deploymentId)).build_path).to.equal(latest.dir);
    expect((await row(withOpenRun.deploymentId)).build_path).to.equal(withOpenRun.dir);

    // Once the run is over, its build goes on the next pass; the latest build still stays.
    await ds.query(`UPDATE runs SET status = 'SUCCEEDED', completed_at = now() WHERE deployment_id = $1`, [
      withOpenRun.deploymentId,
    ]);
    const again = await env.client.workflow.execute('buildCleanupWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `build-cleanup-${randomUUID()}`,
      args: [{}],
    });
    expect(again.removed).to.be.at.least(1);
    expect(fs.existsSync(withOpenRun.dir)).to.equal(false);
    expect(fs.existsSync(latest.dir)).to.equal(true);
    expect(fs.existsSync(cacheFile)).to.equal(true);
    fs.rmSync(freshOrphan, { recursive: true, force: true });
    fs.rmSync(notABuild, { recursive: true, force: true });
  });
});

describe('build cleanup of build artifacts', () => {
  it("deletes a removed build's artifact from the blob store, also one no directory here holds", async () => {
    const t = await newTenant();
    const { env, config, activityDeps } = getStack();
    const a = await resource(t.organizationId);
    const superseded = await deployment(t.organizationId, a, 'SUCCEEDED', 1);
    // Built and run on another worker: its directory is on that worker's disk, not here.
    const elsewhere = await deployment(t.organizationId, a, 'SUCCEEDED', 2);
    fs.rmSync(elsewhere.dir, { recursive: true, force: true });
    const latest = await deployment(t.organizationId, a, 'SUCCEEDED', 3);
    const artifactOf = async (deploymentId: string) => {
      const key = buildArtifactKey(deploymentId, 'a'.repeat(64));
      await activityDeps.blobs.put(key, Readable.from([Buffer.from('artifact')]), 100);
      await getStack().ds.query(
        `UPDATE deployments SET build_artifact_key = $2, build_sha256 = $3, build_artifact_bytes = 8 WHERE deployment_id = $1`,
        [deploymentId, key, 'a'.repeat(64)],
      );
      return key;
    };
    const keys = {
      superseded: await artifactOf(superseded.deploymentId),
      elsewhere: await artifactOf(elsewhere.deploymentId),
      latest: await artifactOf(latest.deploymentId),
    };

    await env.client.workflow.execute('buildCleanupWorkflow', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `build-cleanup-${randomUUID()}`,
      args: [{}],
    });
    expect(await activityDeps.blobs.get(keys.superseded)).to.equal(undefined);
    expect(await activityDeps.blobs.get(keys.elsewhere)).to.equal(undefined);
    const kept = await activityDeps.blobs.get(keys.latest);
    expect(kept?.size).to.equal(8);
    kept?.stream.destroy();
    const row = (id: string) => getStack().ds.getRepository(Deployment).findOneByOrFail({ deployment_id: id });
    expect((await row(elsewhere.deploymentId)).build_path).to.equal(null);
    expect((await row(latest.deploymentId)).build_path).to.equal(latest.dir);
  });
});

// Builds on the host's disk, through the public api: a build past BUILD_DISK_MB or BUILD_CACHE_MB is stopped
// and ends FAILED naming the quota; an organization's later builds use the package cache its first wrote;
// deleting a structure removes its builds, and cancels one in progress. Lower quotas are another
// configuration (configuration objects are frozen): an api and a worker of their own, on a task queue of their own.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Organization } from '../../src/persistence/entities/organization';
import { diskUsage } from '../../src/runtime/build/disk-quota';
import { as } from '../harness/client';
import { randomUUID } from 'node:crypto';
import { configWith, getStack, newTenant, startApi, startWorker } from '../harness/stack';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../fixtures/projects';

const MiB = 1024 * 1024;
const nodeMain = { 'main.js': 'console.log("hi")\n' };

/** A nodejs structure whose pre-build script is `script`; answers its ids once the deployment has started. */
async function structureWithScript(key: string, label: string, script: string, baseUrl?: string) {
  const archive = makeArchive(
    'tar.gz',
    entriesOf({
      'structure_config.yaml': config('nodejs', '  main_file: main.js\n', '  pre_build_install_script: build.sh\n'),
      'build.sh': script,
      ...nodeMain,
    }),
  );
  const bucketId = await uploadToNewBucket(key, `${label}.tar.gz`, archive, baseUrl);
  const created = await as(key, baseUrl).post('/api/structures', {
    name: label,
    code: { data_lake: { bucket_id: bucketId, asset_path: `${label}.tar.gz` } },
  });
  expect(created.status, created.text).to.equal(201);
  return {
    structureId: created.body.structure_id as string,
    deploymentId: created.body.latest_deployment_id as string,
  };
}

/** The organization's package cache directory (per organization when sandboxed). */
async function cacheDirOf(organizationId: string): Promise<string> {
  const { config: cfg, ds } = getStack();
  const root = path.join(cfg.buildDir, '.cache');
  if (cfg.sandbox.mode !== 'on') return root;
  const org = await ds.getRepository(Organization).findOneByOrFail({ organization_id: organizationId });
  return path.join(root, String(cfg.sandbox.gidBase + org.sandbox_index));
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('build quotas', function () {
  this.timeout(180_000);
  /** An api and a worker with these settings; closed after the test. */
  let closers: Array<() => Promise<void>> = [];
  const platformWith = async (settings: Record<string, string>): Promise<string> => {
    const config = configWith({ ...settings, TEMPORAL_TASK_QUEUE: `build-quotas-${randomUUID().slice(0, 8)}` });
    const worker = await startWorker(config);
    const api = await startApi(getStack().env.client, 0, config);
    closers.push(api.close, worker.close);
    return api.baseUrl;
  };
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    closers = [];
  });

  it('stops a build step writing past BUILD_DISK_MB: FAILED, DiskQuotaExceeded, the setting named', async () => {
    const baseUrl = await platformWith({ BUILD_DISK_MB: '32' });
    const t = await newTenant('disk-quota');
    const started = Date.now();
    const { deploymentId } = await structureWithScript(
      t.key,
      'disk-hog',
      'for i in $(seq 1 40); do head -c 5000000 /dev/zero > "fill-$i"; sleep 0.1; done\nsleep 60\n',
      baseUrl,
    );
    const done = await waitForDeployment(t.key, deploymentId);
    expect(done.status, JSON.stringify(done.status_detail)).to.equal('FAILED');
    expect(done.status_detail.reason).to.equal('DiskQuotaExceeded');
    expect(done.status_detail.message).to.match(/BUILD_DISK_MB=32\b/);
    expect(Date.now() - started, 'the step was stopped, not waited for').to.be.lessThan(45_000);
    expect(fs.existsSync(path.join(getStack().config.buildDir, deploymentId))).to.equal(false);
  });

  it('stops a build step filling the package cache past BUILD_CACHE_MB, and trims the cache to it', async () => {
    const baseUrl = await platformWith({ BUILD_CACHE_MB: '16' });
    const t = await newTenant('cache-quota');
    const { deploymentId } = await structureWithScript(
      t.key,
      'cache-hog',
      'mkdir -p "$PIP_CACHE_DIR"\nfor i in $(seq 1 20); do head -c 3000000 /dev/zero > "$PIP_CACHE_DIR/junk-$i"; sleep 0.1; done\nsleep 60\n',
      baseUrl,
    );
    const done = await waitForDeployment(t.key, deploymentId);
    expect(done.status, JSON.stringify(done.status_detail)).to.equal('FAILED');
    expect(done.status_detail.reason).to.equal('CacheQuotaExceeded');
    expect(done.status_detail.message).to.match(/BUILD_CACHE_MB=16\b/);
    expect(await diskUsage(await cacheDirOf(t.organizationId))).to.be.at.most(16 * MiB);
  });

  it("lets an organization's later builds use the package cache its first build wrote", async () => {
    const t = await newTenant('cache-shared');
    const cacheDir = await cacheDirOf(t.organizationId);
    const sandboxed = getStack().config.sandbox.mode === 'on';
    if (sandboxed) {
      // A pip cache left by a build from before caches were shared: one uid's, 0755.
      fs.mkdirSync(path.join(cacheDir, 'pip', 'http'), { recursive: true, mode: 0o755 });
      fs.chmodSync(path.join(cacheDir, 'pip'), 0o755);
      fs.chownSync(path.join(cacheDir, 'pip'), getStack().config.sandbox.uidBase, 0);
    }
    const first = await structureWithScript(
      t.key,
      'cache-writer',
      'id -u\nmkdir -p "$PIP_CACHE_DIR/shared/deeper"\necho from-the-first-build > "$PIP_CACHE_DIR/shared/deeper/entry"\n',
    );
    const one = await waitForDeployment(t.key, first.deploymentId);
    expect(one.status, JSON.stringify(one.status_detail)).to.equal('SUCCEEDED');
    const entry = path.join(cacheDir, 'pip', 'shared', 'deeper', 'entry');
    if (sandboxed) {
      expect(fs.statSync(entry).mode & 0o060, 'group-writable').to.equal(0o060);
      expect(fs.statSync(path.dirname(entry)).mode & 0o2070, 'setgid, group-writable').to.equal(0o2070);
    }
    const second = await structureWithScript(
      t.key,
      'cache-reader',
      'id -u\ncat "$PIP_CACHE_DIR/shared/deeper/entry"\necho again >> "$PIP_CACHE_DIR/shared/deeper/entry"\nmkdir "$PIP_CACHE_DIR/shared/deeper/second"\n',
    );
    const two = await waitForDeployment(t.key, second.deploymentId);
    expect(two.status, JSON.stringify(two.status_detail)).to.equal('SUCCEEDED');
    expect(fs.readFileSync(entry, 'utf8')).to.equal('from-the-first-build\nagain\n');
  });

  it('removes the builds of a deleted structure, and cancels its build in progress', async () => {
    const { buildDir } = getStack().config;
    const t = await newTenant('delete-builds');
    const built = await structureWithScript(t.key, 'built', 'echo built\n');
    expect((await waitForDeployment(t.key, built.deploymentId)).status).to.equal('SUCCEEDED');
    expect(fs.existsSync(path.join(buildDir, built.deploymentId))).to.equal(true);
    expect((await as(t.key).delete(`/api/structures/${built.structureId}`)).status).to.equal(204);
    await until('the build directory to go', () => !fs.existsSync(path.join(buildDir, built.deploymentId)));

    const slow = await structureWithScript(t.key, 'slow', 'touch started-marker\nsleep 300\n');
    await until('the build to start its script', () =>
      fs.existsSync(path.join(buildDir, slow.deploymentId, 'src', 'started-marker')),
    );
    expect((await as(t.key).delete(`/api/structures/${slow.structureId}`)).status).to.equal(204);
    await until('the build in progress to go', () => !fs.existsSync(path.join(buildDir, slow.deploymentId)));
    const handle = getStack().env.client.workflow.getHandle(`deployment-${slow.deploymentId}`);
    await until('its deployment workflow to close', async () => (await handle.describe()).status.name !== 'RUNNING');
  });
});

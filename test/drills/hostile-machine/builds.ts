// Attacks on the host's memory and disk through builds, by an ordinary organization through the public api:
// archive bombs (the worker's RSS measured while it refuses them), a build step writing past BUILD_DISK_MB,
// and one filling the organization's package cache past BUILD_CACHE_MB. Each attack runs its own api and
// worker processes (small quotas), so the worker measured is the one doing the work.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Organization } from '../../../src/persistence/entities/organization';
import { diskUsage } from '../../../src/runtime/build/disk-quota';
import { writeTarGzBomb, writeZipBomb } from '../../harness/archive-bombs';
import { as } from '../../harness/client';
import { getStack, newTenant } from '../../harness/stack';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../../fixtures/projects';
import { Findings, sleep } from '../kit';
import { Processes, startApiProcess, startWorkerProcess } from '../processes';
import { rssGrowthDuring, type MachineAttack, type MachineAttackContext } from './kit';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const DISK_MB = 64;
const CACHE_MB = 32;
const RSS_GROWTH_LIMIT = 100 * 1e6;

interface Deployed {
  status: string;
  reason?: string;
  message?: string;
}

/** An api and a worker of their own (quotas DISK_MB / CACHE_MB) for the length of `attack`. */
async function withBuildWorker<T>(
  label: string,
  attack: (w: { baseUrl: string; workerPid: number }) => Promise<T>,
): Promise<T> {
  const procs = new Processes();
  const queue = `drill-builds-${label}-${process.pid}-${Date.now()}`;
  try {
    const api = await startApiProcess(procs, `${label}-api`, { TEMPORAL_TASK_QUEUE: queue });
    const worker = await startWorkerProcess(procs, `${label}-worker`, {
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
      BUILD_DISK_MB: String(DISK_MB),
      BUILD_CACHE_MB: String(CACHE_MB),
    });
    return await attack({ baseUrl: api.baseUrl, workerPid: worker.proc.pid! });
  } finally {
    await procs.stopAll(new Findings(`hostile-machine/${label}`, 'cleanup'));
  }
}

/** Uploads `bytes` as `asset` and creates a structure from it through `baseUrl`; answers how its build ended. */
async function deploy(key: string, baseUrl: string, asset: string, bytes: Buffer): Promise<Deployed> {
  const bucketId = await uploadToNewBucket(key, asset, bytes);
  const created = await as(key, baseUrl).post('/api/structures', {
    name: asset.replace(/\W/g, '-'),
    code: { data_lake: { bucket_id: bucketId, asset_path: asset } },
  });
  if (created.status !== 201) throw new Error(`creating a structure answered ${created.status} ${created.text}`);
  const done = await waitForDeployment(key, created.body.latest_deployment_id, 120_000);
  return { status: done.status, reason: done.status_detail?.reason, message: done.status_detail?.message };
}

const describe = (d: Deployed) => `${d.status}${d.reason ? ` ${d.reason}` : ''}`;
const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;

/** A nodejs project whose pre-build script is `script`. */
const scriptProject = (script: string) =>
  makeArchive(
    'tar.gz',
    entriesOf({
      'structure_config.yaml': config('nodejs', '  main_file: main.js\n', '  pre_build_install_script: build.sh\n'),
      'build.sh': script,
      'main.js': 'console.log("hi")\n',
    }),
  );

/** Follows a build: the peak disk use of `dir` while the deployment runs. */
async function peakUsageWhile(dir: string, done: Promise<Deployed>): Promise<{ deployed: Deployed; peak: number }> {
  let peak = 0;
  let finished = false;
  const deployed = done.finally(() => (finished = true));
  while (!finished) {
    peak = Math.max(peak, await diskUsage(dir));
    await sleep(200);
  }
  return { deployed: await deployed, peak };
}

async function archiveBomb(ctx: MachineAttackContext) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-drill-bomb-'));
  try {
    const bombs: Array<[string, string, () => void]> = [
      ['one 5 GiB file', 'bomb.tar.gz', () => writeTarGzBomb(path.join(dir, 'bomb.tar.gz'), 1, 5 * GiB)],
      ['160 files of 32 MiB', 'many.tar.gz', () => writeTarGzBomb(path.join(dir, 'many.tar.gz'), 160, 32 * MiB)],
      ['zip, 80 entries of 64 MiB', 'bomb.zip', () => writeZipBomb(path.join(dir, 'bomb.zip'), 80, 64 * MiB)],
      // Local and central headers both declare 1,000 bytes: refused by what the entries really inflate to.
      [
        'zip, 80 entries of 64 MiB declaring 1,000 bytes',
        'lies.zip',
        () => writeZipBomb(path.join(dir, 'lies.zip'), 80, 64 * MiB, 1000),
      ],
    ];
    return await withBuildWorker('archive-bomb', async ({ baseUrl, workerPid }) => {
      const t = await newTenant('drill-archive-bomb');
      const results: string[] = [];
      let held = true;
      for (const [what, asset, make] of ctx.quick ? [bombs[0], bombs[3]] : bombs) {
        make();
        const bytes = fs.readFileSync(path.join(dir, asset));
        const { value: deployed, growth } = await rssGrowthDuring(workerPid, () =>
          deploy(t.key, baseUrl, asset, bytes),
        );
        const ok = deployed.status === 'FAILED' && deployed.reason === 'InvalidArchive' && growth < RSS_GROWTH_LIMIT;
        held &&= ok;
        results.push(
          `${what} (${mb(bytes.length)} on disk, 5 GiB inflated): ${describe(deployed)}, worker RSS +${mb(growth)}`,
        );
        ctx.note(`${what}: ${deployed.message ?? ''}`);
      }
      return { held, result: results.join('; ') };
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function buildDiskHog(ctx: MachineAttackContext) {
  const files = ctx.quick ? 20 : 60;
  return withBuildWorker('build-disk', async ({ baseUrl }) => {
    const t = await newTenant('drill-build-disk');
    const script = `for i in $(seq 1 ${files}); do head -c 5000000 /dev/zero > "fill-$i"; sleep 0.05; done\nsleep 120\n`;
    const bucketId = await uploadToNewBucket(t.key, 'disk.tar.gz', scriptProject(script));
    const started = Date.now();
    const created = await as(t.key, baseUrl).post('/api/structures', {
      name: 'disk-hog',
      code: { data_lake: { bucket_id: bucketId, asset_path: 'disk.tar.gz' } },
    });
    const buildPath = path.join(getStack().config.buildDir, created.body.latest_deployment_id);
    const { deployed, peak } = await peakUsageWhile(
      buildPath,
      waitForDeployment(t.key, created.body.latest_deployment_id, 120_000).then((d) => ({
        status: d.status,
        reason: d.status_detail?.reason,
        message: d.status_detail?.message,
      })),
    );
    const seconds = (Date.now() - started) / 1000;
    ctx.note(`disk hog: ${deployed.message ?? ''}`);
    const held =
      deployed.status === 'FAILED' &&
      deployed.reason === 'DiskQuotaExceeded' &&
      /BUILD_DISK_MB/.test(deployed.message ?? '') &&
      seconds < 60 &&
      !fs.existsSync(buildPath);
    return {
      held,
      result: `${describe(deployed)} after ${seconds.toFixed(1)} s; it tried ${files * 5} MB, the build directory peaked at ${mb(peak)} (quota ${DISK_MB} MiB) and is gone`,
    };
  });
}

async function cacheFiller(ctx: MachineAttackContext) {
  const files = ctx.quick ? 20 : 60;
  return withBuildWorker('build-cache', async ({ baseUrl }) => {
    const t = await newTenant('drill-build-cache');
    const { config: cfg, ds } = getStack();
    const org = await ds.getRepository(Organization).findOneByOrFail({ organization_id: t.organizationId });
    const cacheDir = path.join(
      cfg.buildDir,
      '.cache',
      ...(cfg.sandbox.mode === 'on' ? [String(cfg.sandbox.gidBase + org.sandbox_index)] : []),
    );
    const script =
      'mkdir -p "$PIP_CACHE_DIR" "$npm_config_cache"\n' +
      `for i in $(seq 1 ${files}); do head -c 3000000 /dev/zero > "$PIP_CACHE_DIR/junk-$i"; ` +
      'cp "$PIP_CACHE_DIR/junk-$i" "$npm_config_cache/junk-$i"; sleep 0.05; done\nsleep 120\n';
    const started = Date.now();
    const deployed = await deploy(t.key, baseUrl, 'cache.tar.gz', scriptProject(script));
    const seconds = (Date.now() - started) / 1000;
    const after = await diskUsage(cacheDir);
    ctx.note(`cache filler: ${deployed.message ?? ''}`);
    const held =
      deployed.status === 'FAILED' &&
      deployed.reason === 'CacheQuotaExceeded' &&
      /BUILD_CACHE_MB/.test(deployed.message ?? '') &&
      after <= CACHE_MB * MiB;
    return {
      held,
      result: `${describe(deployed)} after ${seconds.toFixed(1)} s; it tried ${files * 6} MB, the cache was trimmed to ${mb(after)} (quota ${CACHE_MB} MiB)`,
    };
  });
}

export const attacks: MachineAttack[] = [
  {
    name: 'archive-bomb',
    limit: 'unpacked bytes counted as they stream (BUILD_DISK_MB, at most 4 GiB)',
    run: archiveBomb,
  },
  { name: 'build-disk', limit: `BUILD_DISK_MB=${DISK_MB}`, run: buildDiskHog },
  { name: 'build-cache', limit: `BUILD_CACHE_MB=${CACHE_MB}`, run: cacheFiller },
];

// Drill: a hostile tenant. Organization B deploys a structure that tries every way out of its sandbox
// (hostile-program.ts) while organization A's runs work beside it, on a worker process of their own
// (optionally started as a non-root user, `asUser`, with the capabilities docs/security.md lists). Every
// attack must be blocked; A's build, records and secret unchanged and its runs successful; the platform
// healthy; nothing of B's run left on the host. The table lists each attack with its verdict.
// `rootless`: the api and the worker run as an ordinary system user the drill creates, without capabilities,
// with data, blobs and builds of their own: the worker chooses the rootless mode (src/runtime/sandbox/
// isolation.ts). The attacks that mode cannot stop (ROOTLESS_LIMITS) are reported as such, not as findings.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  makeArchive,
  entriesOf,
  uploadToNewBucket,
  waitForDeployment,
  config as deployConfig,
} from '../fixtures/projects';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { Findings, type DrillReport } from './kit';
import { HOSTILE_PROGRAM, VICTIM_PROGRAM } from './hostile-program';
import { Processes, startApiProcess, startWorkerProcess } from './processes';

export interface HostileTenantOptions {
  /** Concurrent runs of organization A beside the hostile run. */
  victims: number;
  /** Start the worker as this non-root user (with the documented capabilities) instead of as root. */
  asUser?: string;
  /** Start the api and the worker as this ordinary system user (made if missing), without capabilities. */
  rootless?: { user: string };
}

/**
 * What the rootless mode cannot stop, and why (docs/security.md#rootless-mode): an escape of one of these in
 * that mode is reported as the mode's limit; any other escape is a finding, as in the root mode.
 */
export const ROOTLESS_LIMITS: Record<string, string> = {
  'uid-not-platform':
    "every organization's code is the worker's uid on the host (root of its own user namespace inside, without capabilities): namespaces alone keep organizations apart, no uid",
  'memory-across-processes':
    'no control group on this host (cgroup v1, none delegated): RUN_MEMORY_LIMIT_MB bounds each process (RLIMIT_AS), not the run',
};

/** Capabilities a non-root worker needs (docs/security.md), as setpriv takes them. */
export const WORKER_CAPABILITIES = [
  'setuid',
  'setgid',
  'chown',
  'fowner',
  'kill',
  'dac_override',
  'setpcap',
  'net_admin',
];

/** The verdict lines of the hostile run's logs: attack → [escaped, detail, the mode's known limit]. */
export type Verdicts = Map<string, { escaped: boolean; detail: string; limit?: string }>;

/** Deploys through `baseUrl`'s api, so that the drill's worker builds it (builds belong to the worker's user). */
export async function deploy(
  key: string,
  baseUrl: string,
  files: Record<string, string>,
  /** Upload through `baseUrl`'s api too (its blobs are its own). */
  ownBlobs = false,
): Promise<{ structureId: string; deploymentId: string }> {
  const zip = makeArchive(
    'zip',
    entriesOf({ 'structure_config.yaml': deployConfig('python3', '  main_file: structure.py\n'), ...files }),
  );
  const bucketId = await uploadToNewBucket(key, 'code.zip', zip, ownBlobs ? baseUrl : undefined);
  const created = await as(key, baseUrl).post('/api/structures', {
    name: 'drill',
    code: { data_lake: { bucket_id: bucketId, asset_path: 'code.zip' } },
  });
  if (created.status !== 201) throw new Error(`creating a structure answered ${created.status} ${created.text}`);
  const deployment = await waitForDeployment(key, created.body.latest_deployment_id);
  if (deployment.status !== 'SUCCEEDED')
    throw new Error(`deployment ${deployment.status}: ${JSON.stringify(deployment.status_detail)}`);
  return { structureId: created.body.structure_id, deploymentId: created.body.latest_deployment_id };
}

/** The worker's own system user, as an operator would make it (docs/security.md). */
function ensureUser(name: string): void {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  }
}

const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Host processes whose command line carries `marker` (what B tried to leave behind). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(marker)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

export async function hostileTenantDrill(
  opts: HostileTenantOptions = { victims: 3 },
): Promise<DrillReport & { verdicts: Verdicts }> {
  const rootless = opts.rootless;
  const f = new Findings(
    rootless ? 'hostile-tenant-rootless' : 'hostile-tenant',
    `a tenant's structure attacks the platform and another tenant${opts.asUser ? ` (worker as ${opts.asUser})` : ''}` +
      (rootless ? ` (rootless: api and worker as ${rootless.user}, no capabilities)` : ''),
  );
  const { config, ds, env, modelProvider } = getStack();
  const procs = new Processes();
  const verdicts: Verdicts = new Map();
  const marker = `hostile-${randomBytes(6).toString('hex')}`;
  // Rootless: data, blobs and builds of the user's own (it cannot reach the stack's), under a directory the
  // drill removes at the end.
  const own = rootless ? fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-rootless-drill-')) : undefined;
  const dataDir = own ? path.join(own, 'data') : config.dataDir;
  const buildDir = own ? path.join(own, 'builds') : config.buildDir;
  const dirs = own ? { DATA_DIR: dataDir, BLOB_DIR: path.join(dataDir, 'blobs'), BUILD_DIR: buildDir } : {};
  const runAs = rootless ? { user: rootless.user, capabilities: [] } : undefined;
  if (rootless) {
    ensureUser(rootless.user);
    fs.chmodSync(own!, 0o711);
    fs.mkdirSync(dataDir, { mode: 0o711 });
    execFileSync('chown', [`${rootless.user}:`, own!, dataDir]);
  }
  // The platform's own key file, as `npm start` keeps it (the stack gets its key from the environment).
  const secretsKeyFile = path.join(dataDir, 'secrets.key');
  if (!fs.existsSync(secretsKeyFile))
    fs.writeFileSync(secretsKeyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
  if (rootless) execFileSync('chown', [`${rootless.user}:`, secretsKeyFile]);
  let stopExposed = () => undefined as unknown;
  try {
    if (opts.asUser) ensureUser(opts.asUser);
    const queue = `drill-hostile-${marker}`;
    const api = await startApiProcess(procs, 'api', { TEMPORAL_TASK_QUEUE: queue, ...dirs }, runAs);
    const workerEnv = {
      ...dirs,
      ...(own ? { SANDBOX_STATE_DIR: path.join(dataDir, 'sandbox') } : {}),
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
      // Small limits, so that the resource attacks hit them quickly.
      SANDBOX_DISK_MB: '64',
      SANDBOX_MAX_PROCESSES: '64',
      RUN_MEMORY_LIMIT_MB: '512',
    };
    const worker = await startWorkerProcess(
      procs,
      'worker',
      workerEnv,
      opts.asUser ? { user: opts.asUser, capabilities: WORKER_CAPABILITIES } : runAs,
    );
    const workerUid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${worker.proc.pid}/status`, 'utf8'))![1]);

    const a = await newTenant('drill-victim');
    const b = await newTenant('drill-hostile');
    const secretValue = `a-secret-${randomBytes(8).toString('hex')}`;
    const secret = await as(a.key, api.baseUrl).post('/api/secrets', { name: 'a', value: secretValue });
    const victim = await deploy(a.key, api.baseUrl, { 'structure.py': VICTIM_PROGRAM }, Boolean(rootless));
    await as(a.key, api.baseUrl).patch(`/api/structures/${victim.structureId}`, {
      env_vars: [{ name: 'A_SECRET', value: secret.body.secret_id, source: 'secret_ref' }],
    });
    const hostile = await deploy(b.key, api.baseUrl, { 'structure.py': HOSTILE_PROGRAM }, Boolean(rootless));
    const aBuildFile = path.join(buildDir, victim.deploymentId, 'src', 'structure.py');
    const aBuildBefore = digest(aBuildFile);
    const aRowsBefore = JSON.stringify(
      await ds.query(
        `SELECT resource_id, env_vars, latest_deployment_id FROM code_resources WHERE organization_id = $1 ORDER BY resource_id`,
        [a.organizationId],
      ),
    );
    const aSecretBefore = JSON.stringify(
      await ds.query(`SELECT value_encrypted FROM secrets WHERE organization_id = $1`, [a.organizationId]),
    );

    // A platform service listening on every interface, reached by the host's own (non-loopback) address.
    const exposed = net.createServer((c) => c.destroy());
    await new Promise<void>((resolve) => exposed.listen(0, '0.0.0.0', resolve));
    // And one on an abstract unix address of the host's network namespace (D-Bus and systemd use these).
    const abstractName = `tarmac-drill-${marker}`;
    const abstract = net.createServer((c) => c.destroy());
    await new Promise<void>((resolve) => abstract.listen(`\0${abstractName}`, resolve));
    stopExposed = () => {
      exposed.close();
      abstract.close();
    };
    const hostAddress =
      Object.values(os.networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? '127.0.0.2';
    const port = (url: string) => Number(new URL(url).port);
    const targets = {
      marker,
      worker_uid: workerUid,
      worker_pid: worker.proc.pid,
      a_build_file: aBuildFile,
      a_run_marker: victim.structureId,
      builds_root: buildDir,
      secrets_key_file: secretsKeyFile,
      blob_dir: own ? dirs.BLOB_DIR : config.blobDir,
      pg_data_dir: path.join(config.dataDir, 'postgres'),
      memory_mb: Number(workerEnv.RUN_MEMORY_LIMIT_MB),
      api_port: port(api.baseUrl),
      host_address: hostAddress,
      host_port: (exposed.address() as net.AddressInfo).port,
      abstract_socket: abstractName,
      ports: {
        postgres: port((ds.options as { url: string }).url),
        temporal: Number(env.address.split(':').pop()),
        'model-provider': port(modelProvider.baseUrl),
      },
    };
    // A's runs first (they read their secret and wait), then B's attack in their midst.
    const victims: string[] = [];
    for (let i = 0; i < opts.victims; i++) {
      const r = await as(a.key, api.baseUrl).post(`/api/structures/${victim.structureId}/runs`, {
        args: ['3'],
        env_vars: [],
      });
      victims.push(r.body.structure_run_id);
    }
    const attack = await as(b.key, api.baseUrl).post(`/api/structures/${hostile.structureId}/runs`, {
      args: [JSON.stringify(targets)],
      env_vars: [],
    });
    if (attack.status !== 201) throw new Error(`starting the hostile run answered ${attack.status} ${attack.text}`);
    f.faults++;
    const attacked = await waitForRun(b.key, attack.body.structure_run_id, undefined, 120_000, api.baseUrl);
    const logs: string[] = (
      await as(b.key, api.baseUrl).get(`/api/structure-runs/${attack.body.structure_run_id}/logs`)
    ).body.logs;
    for (const line of logs) {
      const m = /^VERDICT (\S+) (blocked|ESCAPED) ?(.*)$/.exec(line);
      if (m) verdicts.set(m[1], { escaped: m[2] === 'ESCAPED', detail: m[3] });
    }
    if (!logs.includes('hostile done'))
      f.violation(`the hostile run did not finish its list (${attacked.status}): ${logs.slice(-5).join(' | ')}`);

    // What B tried to leave on the host.
    await new Promise((r) => setTimeout(r, 500));
    const leftover = processesWith(marker);
    verdicts.set('leave-process-behind', {
      escaped: leftover.length > 0,
      detail: leftover.length
        ? `pids ${leftover.join(',')} alive after the run`
        : 'no process of the run after it ended',
    });
    const hostTmp = path.join('/tmp', `hostile-${marker}`);
    verdicts.set('write-host-tmp', {
      escaped: fs.existsSync(hostTmp),
      detail: fs.existsSync(hostTmp) ? `${hostTmp} exists on the host` : 'its /tmp was its own',
    });
    for (const [attack, v] of verdicts) {
      f.checked++;
      if (v.escaped && rootless && ROOTLESS_LIMITS[attack]) {
        v.limit = ROOTLESS_LIMITS[attack];
        f.count('limits');
        continue;
      }
      f.count(v.escaped ? 'escapes' : 'blocked');
      if (v.escaped) f.violation(`ESCAPE ${attack}: ${v.detail}`);
    }
    if (verdicts.size < 30) f.violation(`only ${verdicts.size} attacks reported`);

    // A is untouched, and its runs (concurrent and later) succeed with its secret.
    if (digest(aBuildFile) !== aBuildBefore) f.violation("A's build file changed");
    if (
      JSON.stringify(
        await ds.query(
          `SELECT resource_id, env_vars, latest_deployment_id FROM code_resources WHERE organization_id = $1 ORDER BY resource_id`,
          [a.organizationId],
        ),
      ) !== aRowsBefore
    ) {
      f.violation("A's structures changed");
    }
    if (
      JSON.stringify(
        await ds.query(`SELECT value_encrypted FROM secrets WHERE organization_id = $1`, [a.organizationId]),
      ) !== aSecretBefore
    )
      f.violation("A's secret changed");
    const after = await as(a.key, api.baseUrl).post(`/api/structures/${victim.structureId}/runs`, {
      args: ['0'],
      env_vars: [],
    });
    for (const runId of [...victims, after.body.structure_run_id]) {
      const run = await waitForRun(a.key, runId, undefined, 60_000, api.baseUrl);
      const out: string[] = (await as(a.key, api.baseUrl).get(`/api/structure-runs/${runId}/logs`)).body.logs;
      f.checked++;
      if (run.status !== 'SUCCEEDED')
        f.violation(`A's run ${runId} ended ${run.status} ${JSON.stringify(run.status_detail)}`);
      if (!out.includes(`A ok ${secretValue}`)) f.violation(`A's run ${runId} printed ${JSON.stringify(out)}`);
      if (out.some((l) => l.includes('INJECTED'))) f.violation(`A's run ${runId} ran injected code`);
    }
    const health = await fetch(`${api.baseUrl}/ready`);
    if (health.status !== 200) f.violation(`the api answers /ready with ${health.status} after the attack`);
    f.notes.push(
      `${verdicts.size} attacks, ${f.facts.escapes ?? 0} escapes` +
        (rootless ? `, ${f.facts.limits ?? 0} past the rootless mode's known limits` : '') +
        `; hostile run ${attacked.status} (${JSON.stringify(attacked.status_detail)})`,
    );
  } finally {
    stopExposed();
    await procs.stopAll(f);
    if (own) fs.rmSync(own, { recursive: true, force: true });
  }
  return { ...f.report(), verdicts };
}

/** The verdicts as a markdown table (for the README and the drill's output). */
export function verdictTable(verdicts: Verdicts): string {
  const rows = [...verdicts].map(
    ([attack, v]) =>
      `| ${attack} | ${v.escaped ? (v.limit ? 'not stopped (a limit of the mode)' : '**ESCAPED**') : 'blocked'} | ${v.detail.replace(/\|/g, '\\|').slice(0, 120)} |`,
  );
  return ['| attack | verdict | how |', '|---|---|---|', ...rows].join('\n');
}

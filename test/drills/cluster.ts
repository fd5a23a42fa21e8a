// Drill: the production shape on one machine (src/cli/cluster/production-shape.ts: PostgreSQL, 2 Temporal server
// nodes, HAProxy, moto, 2 apis, 2 workers, each on its own 127.0.1.x address), under a steady load through its
// load balancer (cluster-load.ts: structure runs, function executes, SSE clients), with its faults one after the
// other, each followed by a bounded settle: SIGKILL of Temporal node a, then its restart; SIGKILL of api-1 (its
// streams resume on api-2 through the load balancer with Last-Event-ID), then its restart; SIGKILL of worker-1
// (its runs end ERROR WorkerLost, never stuck), then its restart; worker-2 cut from PostgreSQL (both ways, its
// open connections too) for 30 s, then healed; a PostgreSQL restart (fast shutdown, start).
// The audit: every run answered 201 exists once and ended as its workflow says, none ran twice (the witness),
// streams got each event once in order, every workflow is in the cluster's visibility with its search
// attributes. The notes carry CPU and memory per host under the load, and each fault's recovery times.
// It starts what it needs itself (not the test stack): `npm run drill -- cluster`.
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config';
import { obtainPostgres, obtainSandbox, runTool } from '../../src/cli/start/obtain';
import type { Partition } from '../../src/cli/cluster/network-faults';
import type { PlatformHost } from '../../src/cli/cluster/platform-hosts';
import { startProductionShape, type ProductionShape } from '../../src/cli/cluster/production-shape';
import { checkVisibility, measureHosts, otherRoots, type HostRoot } from './cluster-audit';
import { ClusterLoad, clusterCaller, deployProjects } from './cluster-load';
import { DrillReport, Findings, passed, sleep, tempDir, until } from './kit';
import { checkRuns } from './run-checks';
import { compareFrames, followStream, type Followed } from './sse-follower';
import { Witness } from './witness';

export interface ClusterDrillOptions {
  /** A run (and every other time a function execute) is created this often. */
  everyMs: number;
  /** How long each run of the load lasts, printing `lines` lines and posting `events` events. */
  runSeconds: number;
  lines: number;
  events: number;
  /** The window over which CPU and memory per host are measured, before the faults. */
  measureMs: number;
  /** How long a killed host stays down (the load goes on) before its restart. */
  downMs: number;
  /** SSE clients started on the newest runs before each fault. */
  streams: number;
  /** The bound of each settle: a new run served, every backend back in the load balancer. */
  settleMs: number;
}

interface Fault {
  name: string;
  inject: () => Promise<void>;
  /** Brings the host back (absent: the fault is over when `inject` returns). */
  restore?: () => Promise<void>;
  /** How long it lasts before `restore` (default: the drill's downMs). */
  downMs?: number;
}

/** How long a worker stays cut from PostgreSQL: longer than a heartbeat timeout, as the issue asks. */
const PARTITION_MS = 30_000;

function partitionOf(shape: ProductionShape, host: PlatformHost): Fault {
  let partition: Partition | undefined;
  return {
    name: `${host.name} cut from PostgreSQL for ${PARTITION_MS / 1000} s`,
    inject: async () => void (partition = shape.partitionFromPostgres(host)),
    restore: async () => partition?.heal(),
    downMs: PARTITION_MS,
  };
}

const faultsOf = (shape: ProductionShape): Fault[] => [
  {
    name: 'SIGKILL of Temporal node a',
    inject: () => shape.temporal.killNode(0),
    restore: () => shape.temporal.restartNode(0),
  },
  { name: 'SIGKILL of api-1', inject: () => shape.apis[0].kill(), restore: () => shape.apis[0].start() },
  { name: 'SIGKILL of worker-1', inject: () => shape.workers[0].kill(), restore: () => shape.workers[0].start() },
  // Not as root (or without iptables' matches), no host can be cut: said in the notes, not faked.
  ...(shape.networkFaultsUnavailable ? [] : [partitionOf(shape, shape.workers[1])]),
  { name: 'PostgreSQL restart (fast shutdown, start)', inject: () => shape.restartPostgres() },
];

const hostRoots = (shape: ProductionShape, dataDir: string): HostRoot[] => [
  ...[...shape.apis, ...shape.workers].map((h) => ({ name: h.name, pid: h.process!.pid! })),
  ...shape.temporal.nodes.map((n) => ({ name: `temporal-${n.spec.name}`, pid: n.process!.pid! })),
  ...otherRoots(dataDir, shape.plan.store.host),
];

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The binaries the shape runs (cached in ~/.cache/tarmac after their first download). */
async function obtainShapeTools(): Promise<string> {
  await obtainSandbox(loadConfig());
  await obtainPostgres();
  await runTool('obtain-temporal.sh', ['--cli-only'], 'The Temporal server is built in the CLI module graph.');
  await runTool('obtain-temporal-server.sh', [], 'Go and the Go module proxy build the Temporal server.');
  await runTool('obtain-moto.sh', [], 'Python 3 with pip and PyPI install the S3-compatible store (moto).');
  const haproxy = await runTool('obtain-haproxy.sh', [], 'Install HAProxy (Debian: apt-get install haproxy).');
  if (!haproxy) throw new Error('tools/obtain-haproxy.sh printed no HAProxy binary');
  return haproxy.trim().split('\n').pop()!;
}

export async function clusterDrill(opts: ClusterDrillOptions): Promise<DrillReport> {
  const f = new Findings(
    'cluster',
    'the production shape on one machine: SIGKILL of a Temporal node, an api, a worker (each restarted); a worker cut from PostgreSQL for 30 s; a PostgreSQL restart',
  );
  const haproxy = await obtainShapeTools();
  const dataDir = tempDir('cluster');
  const witness = await Witness.start();
  let shape: ProductionShape | undefined;
  let ds: DataSource | undefined;
  let connection: Connection | undefined;
  try {
    const startedAt = Date.now();
    shape = await startProductionShape({
      dataDir,
      base: '127.0.1',
      haproxy,
      // A silent worker is presumed lost after 10 s (the scale-out drill's figure under load); every run of the
      // load may run at once.
      env: { RUN_HEARTBEAT_TIMEOUT_SECONDS: '10', ORG_MAX_CONCURRENT_RUNS: '200', SHUTDOWN_GRACE_MS: '2000' },
      say: (line) => console.log(`   ${line}`),
    });
    const s = shape;
    if (s.networkFaultsUnavailable) f.notes.push(`no worker cut from PostgreSQL: ${s.networkFaultsUnavailable}`);
    f.notes.push(
      `the shape (PostgreSQL, 2 Temporal nodes, HAProxy, moto, 2 apis, 2 workers) started in ${seconds(Date.now() - startedAt)}`,
    );
    const key = s.bootstrapKey!;
    const call = clusterCaller(s.apiUrl, key);
    const project = await deployProjects(call);
    const load = new ClusterLoad(call, project, witness.url);
    load.start(opts);
    await sleep(opts.runSeconds * 1000); // runs in flight on both workers
    const usage = await measureHosts(hostRoots(s, dataDir), opts.measureMs);
    f.notes.push(
      `CPU and memory per host under the load (${seconds(opts.measureMs)}; a run every ${opts.everyMs} ms, ${opts.runSeconds} s each):`,
      ...usage.map((u) => `  ${u}`),
    );

    const streams: Array<{ fault: string; runId: string; got: Promise<Followed> }> = [];
    for (const fault of faultsOf(s)) {
      for (const runId of load.runIds.slice(-opts.streams))
        streams.push({
          fault: fault.name,
          runId,
          got: followStream(() => [s.apiUrl], runId, key, { deadline: Date.now() + 600_000, maxConnections: 600 }),
        });
      await sleep(1500); // the streams are open and getting frames
      const at = Date.now();
      await fault.inject();
      f.faults++;
      // The probe runs while the fault lasts (the host comes back on time, whatever the probe meets), and may
      // outlast it: it says when service came back.
      const servedProbe = load.probe(opts.settleMs + (fault.downMs ?? opts.downMs)).catch((err: Error) => {
        f.violation(`${fault.name}: ${err.message}`);
        return undefined;
      });
      let restart = '';
      if (fault.restore) {
        await sleep(Math.max(0, (fault.downMs ?? opts.downMs) - (Date.now() - at)));
        const restartAt = Date.now();
        await fault.restore();
        restart = `; back (restarted and ready) ${seconds(Date.now() - restartAt)} after its restart`;
      }
      const served = await servedProbe;
      const settleAt = Date.now();
      await until('every backend in the load balancer', opts.settleMs, async () =>
        (await s.lb.backendStates()).every((b) => b.inRotation) ? true : undefined,
      ).catch((err: Error) => f.violation(`${fault.name}: ${err.message}`));
      const settled = await load.probe(opts.settleMs).catch((err: Error) => {
        f.violation(`${fault.name}: after it, ${err.message}`);
        return undefined;
      });
      const after = settled === undefined ? 'never' : seconds(Date.now() - settleAt);
      f.notes.push(
        `${fault.name}: a new run served ${served === undefined ? 'never' : seconds(served)} after the fault${restart}; every backend up and a new run served ${after} later`,
      );
    }
    await load.stop();
    for (const e of load.errors) f.violation(e);
    f.notes.push(
      `creates retried: ${JSON.stringify(load.retried)}; function executes: ${JSON.stringify(load.functionResults)}`,
    );
    if (load.functionResults.wrong)
      f.violation(`${load.functionResults.wrong} function executes answered another result`);
    if (load.functionResults.unfinished)
      f.violation(`${load.functionResults.unfinished} function executes never ended`);

    ds = await new DataSource({ type: 'postgres', url: s.databaseUrl }).initialize();
    const db = ds;
    const runIds = load.runIds;
    const rows = async (): Promise<
      Array<{ run_id: string; kind: string; organization_id: string; status: string; reason: string | null }>
    > =>
      db.query(
        `SELECT run_id, kind, organization_id, status, status_detail->>'reason' AS reason FROM runs
          WHERE resource_id = ANY($1::uuid[])`,
        [[project.structureId, project.functionId]],
      );
    const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];
    await until(
      'every run of the drill to end',
      300_000,
      async () => ((await rows()).every((r) => TERMINAL.includes(r.status)) ? true : undefined),
      1000,
    ).catch((err: Error) => f.violation(err.message));
    const all = await rows();
    const structureRuns = all.filter((r) => r.kind === 'structure');
    f.twice(
      structureRuns.length - runIds.length - load.probeRunIds.length,
      'structure runs (more rows than runs answered 201)',
    );
    for (const r of all)
      if (r.status !== 'SUCCEEDED' && !(r.status === 'ERROR' && r.reason === 'WorkerLost'))
        f.violation(
          `${r.kind} run ${r.run_id} ended ${r.status} ${r.reason ?? ''}: not SUCCEEDED, nor ERROR WorkerLost`,
        );
    const ended = (kind: string) =>
      Object.entries(
        all
          .filter((r) => r.kind === kind)
          .reduce<Record<string, number>>((n, r) => {
            const k = r.reason ? `${r.status} ${r.reason}` : r.status;
            return { ...n, [k]: (n[k] ?? 0) + 1 };
          }, {}),
      )
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
    f.notes.push(
      `structure runs ${structureRuns.length}: ${ended('structure')}; function runs ${all.length - structureRuns.length}: ${ended('function')}`,
    );
    f.count('runs', structureRuns.length);
    f.count('function runs', all.length - structureRuns.length);

    connection = await Connection.connect({ address: s.temporalAddress });
    const temporal = new Client({ connection, namespace: s.temporal.namespace });
    await checkRuns(f, {
      ds,
      temporal,
      runIds,
      witness,
      expect: { statuses: ['SUCCEEDED', 'ERROR'], lines: opts.lines, events: opts.events, lossRecorded: true },
    });

    const events: Array<{ run_id: string; seq: string; event_id: string }> = await ds.query(
      `SELECT run_id, seq, event_id FROM run_events WHERE run_id = ANY($1::uuid[]) ORDER BY run_id, seq`,
      [streams.map((x) => x.runId)],
    );
    const reconnects: Record<string, number> = {};
    for (const x of streams) {
      const got = await x.got;
      const stored = events
        .filter((e) => e.run_id === x.runId)
        .map((e) => ({ seq: Number(e.seq), event_id: e.event_id }));
      const [missing, repeated, wrong] = compareFrames(got.frames, stored);
      f.checked += got.frames.length;
      f.missing(missing, `SSE events (${x.fault}, run ${x.runId})`);
      f.twice(repeated, `SSE events (${x.fault}, run ${x.runId})`);
      if (wrong) f.violation(`${x.fault}: a stream of run ${x.runId} got frames out of order or not the stored events`);
      if (!got.done)
        f.violation(`${x.fault}: a stream of run ${x.runId} did not reach the end: ${got.breaks.join('; ')}`);
      for (const v of got.endViolations) f.violation(`${x.fault}: a stream: ${v}`);
      reconnects[x.fault] = (reconnects[x.fault] ?? 0) + got.reconnects;
    }
    f.notes.push(
      `${streams.length} SSE streams through the load balancer; reconnects by fault: ${JSON.stringify(reconnects)}`,
    );
    if (!reconnects['SIGKILL of api-1'])
      f.violation('no stream reconnected after the SIGKILL of api-1: was none on it?');
    f.count('streams', streams.length);
    f.count('stream reconnects after the api kill', reconnects['SIGKILL of api-1'] ?? 0);

    await checkVisibility(
      f,
      temporal,
      all.map((r) => ({
        kind: r.kind === 'structure' ? 'structure-run' : 'function-run',
        id: r.run_id,
        organizationId: r.organization_id,
      })),
    );
  } finally {
    await connection?.close();
    await ds?.destroy();
    await shape?.stop();
    await witness.close();
  }
  const report = f.report();
  if (passed(report)) fs.rmSync(dataDir, { recursive: true, force: true });
  else report.notes.push(`the hosts' directories and logs are kept in ${dataDir}`);
  return report;
}

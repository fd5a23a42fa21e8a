// The production Temporal engine (src/cli/cluster/temporal-cluster.ts) on the real server binaries and the
// platform's PostgreSQL 18 (a server of its own): two nodes on 127.0.0.10 and 127.0.0.11 join one ring, a
// workflow runs through node A, node A is SIGKILLed while a second workflow waits for a signal, node B completes
// it, visibility finds both by a custom search attribute, and node A restarted rejoins and serves again.
// Skipped, saying why, only when tools/obtain-temporal-server.sh has not built the binaries.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { RunningPostgres, startEmbeddedPostgres } from '../../src/cli/postgres/embedded-postgres';
import { missingServerBinaries, serverBinaries } from '../../src/cli/cluster/server-binaries';
import { MAX_MEMBERSHIP_PORT } from '../../src/cli/cluster/server-config';
import { migrateTemporalDatabases, sqlEndpointOf } from '../../src/cli/cluster/temporal-schema';
import { startTemporalCluster, TemporalCluster } from '../../src/cli/cluster/temporal-cluster';
import { RESOURCE_ID, RESOURCE_KIND } from '../../src/temporal/search-attributes';
import { freePort, getStack } from '../harness/stack';
import { clusterGreeting, clusterWaitForRelease, releaseSignal } from './cluster-workflows';

const HOSTS = ['127.0.0.10', '127.0.0.11'];
const PORTS_PER_NODE = 9; // server-config.ts, nodePorts

async function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer().once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** A first port whose nine are free on every host (nodes on different addresses share the numbers). */
async function freePortRange(): Promise<number> {
  for (;;) {
    const first = 20_000 + Math.floor(Math.random() * (MAX_MEMBERSHIP_PORT - PORTS_PER_NODE - 20_000));
    const ports = Array.from({ length: PORTS_PER_NODE }, (_, i) => first + i);
    const free = await Promise.all(HOSTS.flatMap((h) => ports.map((p) => portFree(h, p))));
    if (free.every(Boolean)) return first;
  }
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('Temporal cluster: the production engine on PostgreSQL', function () {
  this.timeout(180_000);
  let root: string;
  let pg: RunningPostgres | undefined;
  let cluster: TemporalCluster | undefined;
  const closers: (() => Promise<unknown>)[] = [];

  before(async function () {
    const missing = missingServerBinaries(serverBinaries(getStack().config.cacheDir));
    if (missing.length) {
      console.log(
        `    skipped: the Temporal server binaries are missing (bash tools/obtain-temporal-server.sh): ${missing}`,
      );
      this.skip();
    }
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-temporal-cluster-'));
    fs.chmodSync(root, 0o755); // as root, PostgreSQL's own user must reach its data directory
    pg = await startEmbeddedPostgres({
      dir: path.join(root, 'postgres'),
      port: await freePort(),
      database: 'tarmac',
      persistent: false,
      config: getStack().config,
    });
  });

  after(async () => {
    // Each closer at most 20 s: a worker whose node died must not hold the rest up.
    const within20s = (p: Promise<unknown>) => Promise.race([p, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    for (const close of closers.reverse()) await within20s(close().catch(() => undefined));
    await cluster?.stop();
    await pg?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('runs on two nodes in one ring, finishes work through B after A is SIGKILLed, and takes A back', async () => {
    const { cacheDir } = getStack().config;
    // Migrating first and again in startTemporalCluster: each step is idempotent.
    await migrateTemporalDatabases(serverBinaries(cacheDir), sqlEndpointOf(pg!.url));
    const firstPort = await freePortRange();
    cluster = await startTemporalCluster({
      postgresUrl: pg!.url,
      cacheDir,
      nodes: HOSTS.map((host, i) => ({ name: 'ab'[i], host, firstPort, dir: path.join(root, `node-${'ab'[i]}`) })),
      ui: { host: HOSTS[0], port: await freePort(), dir: path.join(root, 'ui') },
    });
    const [a, b] = cluster.nodes;
    const history = (node: typeof a) => `${node.spec.host}:${node.ports.historyGrpc}`;

    // One ring: both nodes' services in cluster_membership, and each node's live view lists both history hosts.
    const members = await cluster.membership();
    for (const role of ['frontend', 'history', 'matching', 'worker'] as const)
      expect(members.filter((m) => m.role === role).map((m) => m.address)).to.have.members(HOSTS);
    for (const i of [0, 1])
      await eventually(`node ${i}'s ring lists both history hosts`, async () =>
        cluster!.ringView(i, 'history')?.length === 2 ? true : undefined,
      );
    expect(cluster.ringView(0, 'history')).to.have.members([history(a), history(b)]);
    expect(cluster.ringView(1, 'history')).to.have.members([history(a), history(b)]);
    const ui = await fetch(`${cluster.ui!.url}/api/v1/namespaces/default`);
    expect(ui.status, 'the UI server reaches the cluster').to.equal(200);

    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('./cluster-workflows'),
      logger: new DefaultLogger('WARN'),
    });
    const taskQueue = `cluster-${randomUUID()}`;
    const kind = `cluster-test-${randomUUID()}`;
    const startWorker = async (address: string) => {
      const connection = await NativeConnection.connect({ address });
      // No sticky cache: after A dies, B's worker takes the next workflow task from the normal queue at once.
      const worker = await Worker.create({ connection, taskQueue, workflowBundle, maxCachedWorkflows: 0 });
      const running = worker.run();
      closers.push(async () => {
        worker.shutdown();
        await running;
        await connection.close();
      });
    };
    const clientOf = async (address: string) => {
      const connection = await Connection.connect({ address });
      closers.push(() => connection.close());
      return new Client({ connection, namespace: cluster!.namespace });
    };
    const searchAttributes = (id: string) => [
      { key: RESOURCE_KIND, value: kind },
      { key: RESOURCE_ID, value: id },
    ];

    // Through node A: a workflow to its end, and one left waiting for a signal.
    await startWorker(a.frontendAddress);
    const viaA = await clientOf(a.frontendAddress);
    const greetingId = `greeting-${randomUUID()}`;
    const greeting = await viaA.workflow.execute(clusterGreeting, {
      taskQueue,
      workflowId: greetingId,
      args: ['cluster'],
      typedSearchAttributes: searchAttributes('greeting'),
    });
    expect(greeting).to.equal('hello cluster');
    const waiting = await viaA.workflow.start(clusterWaitForRelease, {
      taskQueue,
      workflowId: `waiting-${randomUUID()}`,
      typedSearchAttributes: searchAttributes('waiting'),
    });
    await eventually('the waiting workflow ran its first task', async () =>
      (await waiting.describe()).historyLength >= 4 ? true : undefined,
    );

    // SIGKILL of A; B's frontend, history (taking A's shards) and matching finish it.
    await cluster.killNode(0);
    await startWorker(b.frontendAddress);
    const viaB = await clientOf(b.frontendAddress);
    const onB = viaB.workflow.getHandle(waiting.workflowId);
    await eventually('node B takes the signal', async () => {
      await onB.signal(releaseSignal, 'node B');
      return true;
    });
    expect(await onB.result()).to.equal('released by node B');
    await eventually("node B's ring lost node A", async () =>
      cluster!.ringView(1, 'history')?.join() === history(b) ? true : undefined,
    );

    // Visibility (through B) finds both by the custom search attribute, closed.
    const listed = await eventually('visibility lists both workflows', async () => {
      const found = [];
      for await (const wf of viaB.workflow.list({
        query: `TarmacResourceKind = '${kind}' AND ExecutionStatus = 'Completed'`,
      }))
        found.push(wf);
      return found.length === 2 ? found : undefined;
    });
    expect(listed.map((wf) => wf.workflowId)).to.have.members([greetingId, waiting.workflowId]);
    expect(listed.map((wf) => wf.typedSearchAttributes.get(RESOURCE_ID))).to.have.members(['greeting', 'waiting']);

    // A restarted: it rejoins (both rings list it again) and serves a workflow through its frontend.
    await cluster.restartNode(0);
    for (const i of [0, 1])
      await eventually(`node ${i}'s ring lists node A again`, async () =>
        cluster!.ringView(i, 'history')?.length === 2 ? true : undefined,
      );
    const again = await viaA.workflow.execute(clusterGreeting, {
      taskQueue,
      workflowId: `greeting-${randomUUID()}`,
      args: ['again'],
    });
    expect(again).to.equal('hello again');
  });
});

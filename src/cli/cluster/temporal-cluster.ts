// The production Temporal engine: a cluster of real Temporal server nodes (tools/obtain-temporal-server.sh) on
// PostgreSQL, each node its own process on its own loopback or host address running all four services, plus the
// Temporal UI server. `startTemporalCluster` migrates the databases, writes each node's config, starts the nodes
// (the first alone: it writes the cluster's metadata), waits for every frontend's health, registers the
// namespace with the platform's search attributes and waits until every frontend serves them, then starts the
// UI. The handle kills, stops and restarts single nodes (the drills), lists the members and stops it all.
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { ensureNamespace, servesNamespace } from './cluster-namespace';
import { ClusterProcess, waitUntilReady } from './node-process';
import { reachableMembers, RingService } from './ring-view';
import {
  CONFIG_ENV,
  dynamicConfigYaml,
  LOCAL_HISTORY_SHARDS,
  nodeConfigYaml,
  NodePorts,
  nodePorts,
} from './server-config';
import { missingServerBinaries, ServerBinaries, serverBinaries } from './server-binaries';
import { DEFAULT_DATABASE, migrateTemporalDatabases, sqlEndpointOf } from './temporal-schema';
import { RunningUiServer, startUiServer } from './ui-server';

export interface ClusterNodeSpec {
  /** For logs and messages, e.g. `a`. */
  name: string;
  /** The node's own address (127.0.0.x locally): its services bind to it and announce it to the ring. */
  host: string;
  /** The frontend's gRPC port; the node's other eight follow it (server-config.ts, nodePorts). Default 7233. */
  firstPort?: number;
  /** The node's directory: its config (`config/node.yaml`, with the database password: mode 0600) and its log. */
  dir: string;
}

export interface TemporalClusterOptions {
  /** PostgreSQL as a role that may create databases; the nodes use the same role. */
  postgresUrl: string;
  nodes: ClusterNodeSpec[];
  /** Where the pinned binaries are cached (config.cacheDir). */
  cacheDir: string;
  namespace?: string;
  /** Fixed at the database's first use (server-config.ts, LOCAL_HISTORY_SHARDS). */
  numHistoryShards?: number;
  /** The cluster's address in its metadata, the same on every node: the load balancer's, else the first node's. */
  clusterAddress?: string;
  /** The Web UI, talking to `temporalGrpcAddress` (default the first frontend); none when absent. */
  ui?: { host: string; port: number; dir: string; temporalGrpcAddress?: string };
  /** Per node, from its start to its frontend answering health. */
  readyTimeoutMs?: number;
}

export interface ClusterNode {
  readonly spec: ClusterNodeSpec;
  readonly ports: NodePorts;
  /** `host:port` of its frontend's gRPC service. */
  readonly frontendAddress: string;
  readonly logFile: string;
  /** Its process now (a new one after each restart); undefined before its first start. */
  process: ClusterProcess | undefined;
}

/** A row of the `cluster_membership` table: a service of a node that has joined (it stays 48 h after leaving). */
export interface MembershipRecord {
  role: 'frontend' | 'history' | 'matching' | 'worker' | 'internal-frontend';
  address: string;
  port: number;
  lastHeartbeat: Date;
}

export interface TemporalCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every node's frontend, `host:port`, running or not: what a load balancer or a client spreads over. */
  readonly frontends: string[];
  readonly namespace: string;
  readonly ui: RunningUiServer | undefined;
  /** SIGKILL of node `i`; the others take its shards over once the ring notices (seconds). */
  killNode(i: number): Promise<void>;
  /** SIGTERM of node `i` (it hands its shards over and leaves), SIGKILL if it lingers. */
  stopNode(i: number): Promise<void>;
  /** Starts node `i` again (after a kill or a stop) and waits for its frontend's health. */
  restartNode(i: number): Promise<void>;
  membership(): Promise<MembershipRecord[]>;
  /** The gRPC addresses of `service`'s members as node `i` last saw them (its log; ring-view.ts). */
  ringView(i: number, service: RingService): string[] | undefined;
  /** The UI, then every node (SIGTERM, then SIGKILL). */
  stop(): Promise<void>;
}

const ROLES: Record<number, MembershipRecord['role']> = {
  1: 'frontend',
  2: 'history',
  3: 'matching',
  4: 'worker',
  5: 'internal-frontend',
};
const SERVING = 1; // grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING
const FRONTEND_HEALTH_SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';

export async function startTemporalCluster(opts: TemporalClusterOptions): Promise<TemporalCluster> {
  if (!opts.nodes.length) throw new Error('a Temporal cluster needs at least one node');
  const bin = serverBinaries(opts.cacheDir);
  const missing = missingServerBinaries(bin);
  if (missing.length)
    throw new Error(`Temporal cluster binaries missing (run tools/obtain-temporal-server.sh): ${missing.join(', ')}`);
  const namespace = opts.namespace ?? 'default';
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const sql = sqlEndpointOf(opts.postgresUrl);
  await migrateTemporalDatabases(bin, sql);

  const nodes: ClusterNode[] = opts.nodes.map((spec) => {
    const ports = nodePorts(spec.firstPort ?? 7233);
    return {
      spec,
      ports,
      frontendAddress: `${spec.host}:${ports.frontendGrpc}`,
      logFile: path.join(spec.dir, 'temporal.log'),
      process: undefined,
    };
  });
  const clusterAddress = opts.clusterAddress ?? nodes[0].frontendAddress;
  for (const node of nodes) {
    fs.mkdirSync(path.join(node.spec.dir, 'config'), { recursive: true });
    const dynamicConfigFile = path.join(node.spec.dir, 'config', 'dynamic.yaml');
    fs.writeFileSync(dynamicConfigFile, dynamicConfigYaml());
    const yaml = nodeConfigYaml({
      host: node.spec.host,
      ports: node.ports,
      sql,
      numHistoryShards: opts.numHistoryShards ?? LOCAL_HISTORY_SHARDS,
      clusterAddress,
      dynamicConfigFile,
    });
    fs.writeFileSync(path.join(node.spec.dir, 'config', `${CONFIG_ENV}.yaml`), yaml, { mode: 0o600 });
  }

  const startNode = async (node: ClusterNode) => {
    if (node.process?.running) throw new Error(`Temporal node ${node.spec.name} is running already`);
    node.process = spawnNode(bin, node);
    await waitUntilReady(
      node.process,
      `Temporal node ${node.spec.name} (${node.frontendAddress})`,
      () => frontendServing(node.frontendAddress),
      readyTimeoutMs,
    );
  };
  const stopAll = async () => Promise.all(nodes.map((n) => n.process?.stop()));
  let ui: RunningUiServer | undefined;
  try {
    // The first node alone: on a new database it writes the cluster's metadata, which the others then read.
    await startNode(nodes[0]);
    await Promise.all(nodes.slice(1).map(startNode));
    const connection = await Connection.connect({ address: nodes[0].frontendAddress });
    try {
      await ensureNamespace(connection, namespace);
    } finally {
      await connection.close();
    }
    await Promise.all(nodes.map((node) => waitUntilServed(node, namespace, readyTimeoutMs)));
    if (opts.ui)
      ui = await startUiServer({
        binary: bin.uiServer,
        dir: opts.ui.dir,
        host: opts.ui.host,
        port: opts.ui.port,
        temporalGrpcAddress: opts.ui.temporalGrpcAddress ?? nodes[0].frontendAddress,
      });
  } catch (err) {
    await stopAll();
    throw err;
  }

  const nodeAt = (i: number) => {
    const node = nodes[i];
    if (!node) throw new Error(`no Temporal node ${i} (the cluster has ${nodes.length})`);
    return node;
  };
  return {
    nodes,
    frontends: nodes.map((n) => n.frontendAddress),
    namespace,
    ui,
    killNode: async (i) => void (await nodeAt(i).process?.kill()),
    stopNode: async (i) => void (await nodeAt(i).process?.stop()),
    restartNode: async (i) => startNode(nodeAt(i)),
    membership: () => membershipRecords(opts.postgresUrl),
    ringView: (i, service) => reachableMembers(nodeAt(i).logFile, service),
    stop: async () => {
      await ui?.stop();
      await stopAll();
    },
  };
}

function spawnNode(bin: ServerBinaries, node: ClusterNode): ClusterProcess {
  const args = ['--root', node.spec.dir, '--config', 'config', '--env', CONFIG_ENV, '--allow-no-auth', 'start'];
  return new ClusterProcess(`temporal-${node.spec.name}`, bin.server, args, node.logFile);
}

/** Whether the frontend at `address` answers gRPC health with SERVING. */
export async function frontendServing(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    const res = await connection.healthService.check({ service: FRONTEND_HEALTH_SERVICE });
    return res.status === SERVING;
  } finally {
    await connection.close();
  }
}

async function waitUntilServed(node: ClusterNode, namespace: string, timeoutMs: number): Promise<void> {
  const connection = await Connection.connect({ address: node.frontendAddress });
  try {
    await waitUntilReady(
      node.process!,
      `namespace ${namespace} on Temporal node ${node.spec.name}`,
      () => servesNamespace(connection, namespace),
      timeoutMs,
    );
  } finally {
    await connection.close();
  }
}

async function membershipRecords(postgresUrl: string): Promise<MembershipRecord[]> {
  const url = new URL(postgresUrl);
  url.pathname = `/${DEFAULT_DATABASE}`;
  const client = new PgClient({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ role: number; rpc_address: string; rpc_port: number; last_heartbeat: Date }>(
      `SELECT role, rpc_address, rpc_port, last_heartbeat FROM cluster_membership ORDER BY role, rpc_address`,
    );
    return rows.map((r) => ({
      role: ROLES[r.role] ?? 'frontend',
      address: r.rpc_address,
      port: r.rpc_port,
      lastHeartbeat: r.last_heartbeat,
    }));
  } finally {
    await client.end();
  }
}

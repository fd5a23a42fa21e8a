// The configuration of one node of the Temporal cluster, after the server's config/development-postgres12.yaml:
// both stores on PostgreSQL through the `postgres12` sql plugin, every node running the four services
// (frontend, history, matching, worker) bound to and broadcasting its own address. Nodes find each other through
// the `cluster_membership` table of the `temporal` database (the server's default ringpop bootstrap): no seed
// list to keep. The file is the server's `<root>/config/<env>.yaml`, loaded with `--root <dir> --env node`.
import YAML from 'yaml';
import { DEFAULT_DATABASE, SQL_PLUGIN, SqlEndpoint, VISIBILITY_DATABASE } from './temporal-schema';

/**
 * History shards: fixed when the cluster's database is first used and never changeable after. 4 for the local and
 * test clusters (as the server's development configs); a production cluster picks its own before its first start
 * (Temporal suggests 512 or more for large clusters), and a database keeps the number it was created with.
 */
export const LOCAL_HISTORY_SHARDS = 4;

/** The environment name: the node's file is `config/node.yaml` under its directory. */
export const CONFIG_ENV = 'node';

export interface NodePorts {
  frontendGrpc: number;
  frontendHttp: number;
  historyGrpc: number;
  matchingGrpc: number;
  workerGrpc: number;
  frontendMembership: number;
  historyMembership: number;
  matchingMembership: number;
  workerMembership: number;
}

/** `cluster_membership.rpc_port` is a SMALLINT in Temporal's PostgreSQL schema: a node on a higher one dies at start. */
export const MAX_MEMBERSHIP_PORT = 32_767;

/**
 * The ports of a node from its first: the frontend's gRPC port, then the frontend's HTTP API, the other services'
 * gRPC ports and the four membership (ringpop) ports, nine in a row. Nodes on different addresses may share them.
 */
export function nodePorts(firstPort: number): NodePorts {
  if (!Number.isInteger(firstPort) || firstPort < 1 || firstPort + 8 > MAX_MEMBERSHIP_PORT)
    throw new Error(
      `a Temporal node's first port must leave its nine ports at most ${MAX_MEMBERSHIP_PORT} (Temporal stores membership ports as SMALLINT): ${firstPort}`,
    );
  return {
    frontendGrpc: firstPort,
    frontendHttp: firstPort + 1,
    historyGrpc: firstPort + 2,
    matchingGrpc: firstPort + 3,
    workerGrpc: firstPort + 4,
    frontendMembership: firstPort + 5,
    historyMembership: firstPort + 6,
    matchingMembership: firstPort + 7,
    workerMembership: firstPort + 8,
  };
}

export interface NodeConfigInput {
  /** The node's own address: every service binds to it and announces it to the ring. */
  host: string;
  ports: NodePorts;
  sql: SqlEndpoint;
  numHistoryShards: number;
  /**
   * The cluster's address in its metadata (`clusterInformation.rpcAddress`), the same on every node: the server
   * rewrites the stored record when a node's differs, and nodes starting together would then race on it.
   */
  clusterAddress: string;
  /** The dynamic config file every node reads (and polls for changes). */
  dynamicConfigFile: string;
}

export function nodeConfigYaml(input: NodeConfigInput): string {
  const { host, ports, sql } = input;
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName,
      connectAddr: `${sql.host}:${sql.port}`,
      connectProtocol: 'tcp',
      user: sql.user,
      password: sql.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, extra: Record<string, number> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: host, ...extra },
  });
  const config = {
    log: { stdout: true, level: 'info' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: input.numHistoryShards,
      datastores: {
        'postgres-default': store(DEFAULT_DATABASE, 20),
        'postgres-visibility': store(VISIBILITY_DATABASE, 5),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: host } },
    services: {
      frontend: rpc(ports.frontendGrpc, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: rpc(ports.historyGrpc, ports.historyMembership),
      matching: rpc(ports.matchingGrpc, ports.matchingMembership),
      worker: rpc(ports.workerGrpc, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: input.clusterAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
  return `# Written by src/cli/cluster/server-config.ts at every start of the node; edits are overwritten.\n${YAML.stringify(config)}`;
}

/**
 * The cluster's dynamic config: the values the CLI's dev server sets, so that the cluster serves the platform as
 * the dev server it is tested on (a smaller host-level history cache, 100 visibility requests per second and
 * frontend instead of 10: the console lists runs through visibility).
 */
export function dynamicConfigYaml(): string {
  const values = {
    'history.hostLevelCacheMaxSize': [{ value: 8192 }],
    'frontend.namespaceRPS.visibility': [{ value: 100 }],
  };
  return `# Written by src/cli/cluster/server-config.ts; the nodes poll it every 10 s.\n${YAML.stringify(values)}`;
}

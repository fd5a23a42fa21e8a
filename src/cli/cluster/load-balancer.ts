// The load balancer of the production shape on one machine: HAProxy (tools/obtain-haproxy.sh), in the
// foreground as a child process, configured by src/cli/cluster/haproxy-config.ts. Its directory holds
// haproxy.cfg, haproxy.log (every request and check change) and the runtime API's socket, which
// backendStates reads (`show stat`) and setServerState writes (drain a server before stopping it).
//
//   const lb = await startLoadBalancer({ dir, binary, http: { host, port, backends: [{ name: 'api-1', address }] } });
//   lb.httpUrl;                    // what PUBLIC_BASE_URL and RUN_API_BASE_URL point at
//   await lb.backendStates();      // [{ pool: 'api', name: 'api-1', status: 'UP', ... }]
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GRPC_POOL, haproxyConfig, HTTP_POOL, type Backend, type Pool } from './haproxy-config';
import { ClusterProcess, waitUntilReady } from './node-process';

export type { Backend, Pool } from './haproxy-config';

export interface LoadBalancerOptions {
  dir: string;
  http: Pool & { balance?: 'roundrobin' | 'leastconn'; alsoOn?: string[] };
  /** Temporal's frontends, for gRPC clients (the api, the workers). */
  grpc?: Pool;
  /** The HAProxy to run: the path tools/obtain-haproxy.sh prints (HAPROXY_BINARY, or Debian's). */
  binary: string;
}

export interface BackendState {
  /** `api` (the HTTP pool) or `temporal` (the gRPC pool). */
  pool: string;
  name: string;
  address: string;
  /** HAProxy's word: UP, DOWN, MAINT, DRAIN, or a transition such as `UP 1/2` (one failed check of two). */
  status: string;
  /** In the rotation: UP, or UP with a failed check that has not yet taken it out. */
  inRotation: boolean;
  /**
   * The last check's result, e.g. L7OK, L7STS (an unexpected status), L4CON (connection refused).
   * HAProxy prefixes it with `* ` while the next check is in progress; that marker is dropped here.
   */
  lastCheck: string;
  /** Connections (TCP) or requests (HTTP) now, and since the start. */
  currentSessions: number;
  totalSessions: number;
}

export interface LoadBalancer {
  /** http://host:port of the HTTP frontend. */
  httpUrl: string;
  /** host:port of the gRPC frontend (TEMPORAL_ADDRESS), if there is one. */
  grpcAddress: string | undefined;
  logFile: string;
  backendStates(): Promise<BackendState[]>;
  /** `drain`: no new requests, those in flight finish; `maint`: out; `ready`: back in (after its checks). */
  setServerState(pool: string, name: string, state: 'ready' | 'drain' | 'maint'): Promise<void>;
  /** SIGTERM (HAProxy's hard stop: open connections close), SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
}

/** A unix socket's path must fit sun_path (108 bytes): a deep `dir` gets one in the temporary directory. */
function socketPath(dir: string): string {
  const inDir = path.join(dir, 'haproxy.sock');
  if (Buffer.byteLength(inDir) < 100) return inDir;
  return path.join(os.tmpdir(), `tarmac-haproxy-${crypto.randomBytes(6).toString('hex')}.sock`);
}

export async function startLoadBalancer(options: LoadBalancerOptions): Promise<LoadBalancer> {
  const dir = path.resolve(options.dir);
  fs.mkdirSync(dir, { recursive: true });
  const statsSocket = socketPath(dir);
  fs.rmSync(statsSocket, { force: true }); // one left by a killed HAProxy would fail the bind
  const configFile = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(configFile, haproxyConfig({ http: options.http, grpc: options.grpc, statsSocket }));
  const logFile = path.join(dir, 'haproxy.log');
  const proc = new ClusterProcess('load balancer', options.binary, ['-db', '-f', configFile], logFile);
  void proc.exited.then(() => fs.rmSync(statsSocket, { force: true }));
  const runtime = (command: string) => runtimeCommand(statsSocket, command);
  try {
    // The socket answers once the configuration is read and every frontend is bound.
    await waitUntilReady(proc, 'HAProxy', async () => (await runtime('show info')).includes('Pid:'), 15_000);
  } catch (err) {
    await proc.kill();
    throw err;
  }
  const hostPort = (pool: Pool) => `${pool.host.includes(':') ? `[${pool.host}]` : pool.host}:${pool.port}`;
  return {
    httpUrl: `http://${hostPort(options.http)}`,
    grpcAddress: options.grpc ? hostPort(options.grpc) : undefined,
    logFile,
    backendStates: async () => parseStats(await runtime('show stat'), options),
    setServerState: async (pool, name, state) => {
      const answer = (await runtime(`set server ${pool}/${name} state ${state}`)).trim();
      if (answer) throw new Error(`load balancer: set server ${pool}/${name} state ${state}: ${answer}`);
    },
    stop: async () => {
      await proc.stop(5_000);
    },
    kill: async () => {
      await proc.kill();
    },
  };
}

/** One command on HAProxy's runtime API (non-interactive: it answers and closes). */
function runtimeCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(socket);
    let answer = '';
    conn.setEncoding('utf8');
    conn.setTimeout(5_000, () => conn.destroy(new Error(`HAProxy runtime API: no answer to ${command}`)));
    conn.on('connect', () => conn.write(`${command}\n`));
    conn.on('data', (chunk: string) => (answer += chunk));
    conn.on('end', () => resolve(answer));
    conn.on('error', reject);
  });
}

/** `show stat`'s CSV, the servers' rows only (not the FRONTEND and BACKEND summary rows). */
function parseStats(csv: string, options: LoadBalancerOptions): BackendState[] {
  const [header, ...rows] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const at = (row: string[], column: string) => row[columns.indexOf(column)] ?? '';
  const addresses = new Map<string, string>();
  const remember = (pool: string, backends: Backend[]) => {
    for (const b of backends) addresses.set(`${pool}/${b.name}`, b.address);
  };
  remember(HTTP_POOL, options.http.backends);
  if (options.grpc) remember(GRPC_POOL, options.grpc.backends);
  return rows
    .map((line) => line.split(','))
    .filter(
      (row) =>
        ![`FRONTEND`, `BACKEND`].includes(at(row, 'svname')) &&
        addresses.has(`${at(row, 'pxname')}/${at(row, 'svname')}`),
    )
    .map((row) => {
      const status = at(row, 'status');
      return {
        pool: at(row, 'pxname'),
        name: at(row, 'svname'),
        address: addresses.get(`${at(row, 'pxname')}/${at(row, 'svname')}`)!,
        status,
        inRotation: status === 'UP' || status.startsWith('UP ') || status === 'no check',
        lastCheck: at(row, 'check_status').replace(/^\* /, ''),
        currentSessions: Number(at(row, 'scur')) || 0,
        totalSessions: Number(at(row, 'stot')) || 0,
      };
    });
}

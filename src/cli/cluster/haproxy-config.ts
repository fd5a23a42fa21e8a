// The haproxy.cfg of the production shape's load balancer (src/cli/cluster/load-balancer.ts starts it): an
// HTTP pool in front of the api processes, health-checked on the api's readiness route, and a TCP pool in
// front of the Temporal frontends for gRPC. Why each setting is what it is, is said beside it; what it
// means, in HAProxy's configuration manual (2.6, Debian bookworm's).
export interface Backend {
  /** The server's name in HAProxy (letters, digits, `.`, `-`, `_`), e.g. `api-1`. */
  name: string;
  /** host:port. */
  address: string;
}

export interface Pool {
  host: string;
  port: number;
  backends: Backend[];
}

export interface HaproxySettings {
  /**
   * `alsoOn`: further host:port the HTTP frontend listens on (the production shape's address for user code:
   * a run's network namespace reaches only the host's 127.0.0.1, docs/production.md).
   */
  http: Pool & { balance?: 'roundrobin' | 'leastconn'; alsoOn?: string[] };
  grpc?: Pool;
  /** The runtime API's unix socket (backendStates, server states). */
  statsSocket: string;
}

/** HAProxy's names of the two pools (proxies), as `show stat` reports them. */
export const HTTP_POOL = 'api';
export const GRPC_POOL = 'temporal';

/** The api's readiness route (src/api/app.ts): 200 when its database, Temporal and disk are fine, else 503. */
export const READINESS_PATH = '/ready';

/**
 * Checks every 500 ms, two in a row to change a server's state: a dead or unready server leaves the rotation
 * about a second after it stops answering (two refused connects), a check that hangs takes `timeout check`
 * twice; one that comes back rejoins after two good checks.
 */
const CHECKS = 'inter 500ms fall 2 rise 2';

export function haproxyConfig(settings: HaproxySettings): string {
  const { http, grpc } = settings;
  for (const pool of [http, ...(grpc ? [grpc] : [])]) {
    if (pool.backends.length === 0) throw new Error(`load balancer: no backends for ${pool.host}:${pool.port}`);
    for (const b of pool.backends) {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(b.name)) throw new Error(`load balancer: bad server name ${b.name}`);
      if (!/^[^\s:]+:\d+$/.test(b.address)) throw new Error(`load balancer: ${b.name}: address is not host:port`);
    }
  }
  const lines = [
    'global',
    // In the foreground (-db) HAProxy logs to stdout, which the process's log file takes.
    '  log stdout format raw local0 info',
    `  stats socket ${settings.statsSocket} mode 600 level admin`,
    '  stats timeout 10s',
    '  maxconn 4096',
    '',
    'defaults',
    '  log global',
    '  option dontlognull',
    '  timeout connect 2s',
    // A connect that fails (a killed server: connection refused) is retried, each retry on another server.
    '  retries 3',
    '  option redispatch 1',
    '  timeout check 1500ms',
    '',
    `frontend ${HTTP_POOL}-in`,
    '  mode http',
    `  bind ${http.host}:${http.port}`,
    ...(http.alsoOn ?? []).map((address) => `  bind ${address}`),
    '  option httplog',
    // The api sees who called (rate limits, audit): the client's address in X-Forwarded-For.
    '  option forwardfor',
    '  timeout http-request 10s',
    '  timeout http-keep-alive 10s',
    // Idle timers, not lifetimes: an event stream lasts minutes but writes a keep-alive comment every
    // SSE_KEEPALIVE_MS (15 s by default), and a client may read slowly; an upload may pause.
    '  timeout client 10m',
    `  default_backend ${HTTP_POOL}`,
    '',
    `backend ${HTTP_POOL}`,
    '  mode http',
    `  balance ${http.balance ?? 'leastconn'}`, // leastconn: long event streams weigh on the server that holds them
    '  option httpchk',
    `  http-check send meth GET uri ${READINESS_PATH} ver HTTP/1.1 hdr Host load-balancer`,
    '  http-check expect status 200',
    // A read whose server died before answering (nothing came back) is sent again, to another server; any
    // other method only when its connection failed, that is when it never reached a server: a create the
    // dead server may have done is not done twice.
    '  retry-on conn-failure empty-response',
    '  http-request disable-l7-retry if !METH_GET',
    '  timeout server 10m',
    // Upgraded connections (none today; WebSocket if ever) idle this long.
    '  timeout tunnel 1h',
    `  default-server ${CHECKS}`,
    ...http.backends.map((b) => `  server ${b.name} ${b.address} check`),
  ];
  if (grpc) {
    lines.push(
      '',
      `frontend ${GRPC_POOL}-in`,
      '  mode tcp',
      `  bind ${grpc.host}:${grpc.port}`,
      '  option tcplog',
      '  timeout client 10m',
      `  default_backend ${GRPC_POOL}`,
      '',
      `backend ${GRPC_POOL}`,
      '  mode tcp',
      // gRPC is HTTP/2: a client keeps its connection, so this balances connections, not calls.
      '  balance leastconn',
      '  timeout server 10m',
      // A long poll waits up to 70 s with nothing on the wire; the tunnel timer outlasts it many times.
      '  timeout tunnel 10m',
      // A frontend marked down (killed, or cut off) takes its connections with it: clients reconnect through
      // here to a live one instead of waiting on a long poll that will never answer.
      `  default-server ${CHECKS} on-marked-down shutdown-sessions`,
      ...grpc.backends.map((b) => `  server ${b.name} ${b.address} check`),
    );
  }
  return lines.join('\n') + '\n';
}

// The hosts of the production shape on one machine (`npm run cluster`, the cluster drill): each its own
// loopback address (and its own directory), so nothing relies on sharing localhost or a filesystem with another
// host. `base` is the first three octets, so that a drill can run beside a cluster started by hand
// (127.0.0.x for `npm run cluster`, 127.0.1.x for the drill). Ports are fixed per role: every host has its own
// address, and Temporal's membership ports must stay under 32768 (server-config.ts).
export interface HostPlan {
  postgres: { host: string; port: number };
  /** The Temporal server nodes: every node runs all four services. */
  temporal: Array<{ name: string; host: string; firstPort: number }>;
  ui: { host: string; port: number };
  store: { host: string; port: number };
  /**
   * HAProxy: HTTP to the apis, TCP (gRPC) to the Temporal frontends. `runs`: where user code reaches the api
   * through it (RUN_API_BASE_URL): a run's network namespace reaches the host's loopback only at 127.0.0.1
   * (pasta's forwarded ports), so the load balancer listens there too, on a port of this base's own.
   */
  lb: { host: string; httpPort: number; grpcPort: number; runs: { host: string; port: number } };
  apis: Array<{ name: string; host: string; port: number }>;
  workers: Array<{ name: string; host: string; metricsPort: number }>;
  embeddings: { host: string; port: number };
}

export const API_PORT = 8080;

export function hostPlan(
  opts: { base?: string; temporalNodes?: number; apis?: number; workers?: number } = {},
): HostPlan {
  const base = opts.base ?? '127.0.0';
  if (!/^127\.\d{1,3}\.\d{1,3}$/.test(base)) throw new Error(`the hosts' base must be 127.<n>.<n>, not ${base}`);
  const at = (last: number) => `${base}.${last}`;
  const third = Number(base.split('.')[2]);
  const count = (n: number | undefined, fallback: number, most: number, what: string) => {
    const v = n ?? fallback;
    if (!Number.isInteger(v) || v < 1 || v > most) throw new Error(`${what}: 1 to ${most}, not ${v}`);
    return v;
  };
  const nodes = count(opts.temporalNodes, 2, 5, 'Temporal nodes');
  const apis = count(opts.apis, 2, 9, 'api hosts');
  const workers = count(opts.workers, 2, 9, 'worker hosts');
  return {
    postgres: { host: at(20), port: 5432 },
    temporal: Array.from({ length: nodes }, (_, i) => ({
      name: String.fromCharCode(97 + i),
      host: at(10 + i),
      firstPort: 7233,
    })),
    ui: { host: at(19), port: 8233 },
    store: { host: at(30), port: 9000 },
    lb: { host: at(40), httpPort: API_PORT, grpcPort: 7233, runs: { host: '127.0.0.1', port: 18080 + third } },
    apis: Array.from({ length: apis }, (_, i) => ({ name: `api-${i + 1}`, host: at(41 + i), port: API_PORT })),
    workers: Array.from({ length: workers }, (_, i) => ({
      name: `worker-${i + 1}`,
      host: at(51 + i),
      metricsPort: 9464,
    })),
    embeddings: { host: at(60), port: 8091 },
  };
}

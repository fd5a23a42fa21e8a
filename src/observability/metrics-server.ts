// Serving the registry of metrics.ts: the api's `GET /metrics` route (app.ts) and the worker's own listener.
// With METRICS_TOKEN set, a scrape must send `Authorization: Bearer <token>`.
import { timingSafeEqual, createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { Logger } from '../logger';
import { registry } from './metrics';

/** True when no token is configured, or `authorization` carries it. */
export function metricsAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(given), digest(token));
}

export const METRICS_CONTENT_TYPE = registry.contentType;

/** The registry as Prometheus text, followed by `extra` (the Temporal SDK's own exposition, on the worker). */
export async function metricsText(extra?: () => Promise<string>): Promise<string> {
  const ours = await registry.metrics();
  return extra ? `${ours}\n${await extra()}` : ours;
}

/**
 * The Temporal SDK's metrics (task slots, poll latencies, ...), exported by its Rust core on its own address,
 * fetched on each scrape so that one target has both. An unreachable exporter adds nothing (and says so).
 */
export function forwardedMetrics(address: string): () => Promise<string> {
  return async () => {
    try {
      const res = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(2000) });
      return res.ok ? await res.text() : `# Temporal SDK metrics unavailable: HTTP ${res.status}\n`;
    } catch (err) {
      return `# Temporal SDK metrics unavailable: ${(err as Error).message}\n`;
    }
  };
}

/** A free loopback port (for the Temporal SDK's exporter when TEMPORAL_METRICS_ADDRESS is unset). */
export async function freeLoopbackAddress(): Promise<string> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(`127.0.0.1:${port}`));
    });
    srv.on('error', reject);
  });
}

/** The worker's metrics listener: `GET /metrics` only. */
export async function startMetricsServer(opts: {
  port: number;
  host: string;
  token: string | undefined;
  extra?: () => Promise<string>;
  log: Logger;
}): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const json = (status: number, type: string, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type, errors: [{ message }] }));
    };
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/metrics') return json(404, 'NotFoundError', 'Not found');
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, 'MethodNotAllowedError', 'Only GET');
    if (!metricsAuthorized(req.headers.authorization, opts.token))
      return json(401, 'UnauthorizedError', 'Authorization: Bearer <METRICS_TOKEN> is required');
    metricsText(opts.extra).then(
      (text) => {
        res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err) => {
        opts.log.error({ err }, 'metrics failed');
        json(500, 'InternalError', 'Internal error');
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host, resolve));
  opts.log.info({ port: (server.address() as net.AddressInfo).port }, 'worker metrics listening');
  return server;
}

import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { KeyCache } from './http/key-cache';
import Koa from 'koa';
import type { Deps } from './deps';
import {
  HttpError,
  methodNotAllowed,
  notFound,
  RETRY_AFTER_SECONDS,
  temporarilyUnavailable,
  unauthorized,
} from '../errors';
import { httpDuration, httpRequests } from '../observability/metrics';
import { METRICS_CONTENT_TYPE, metricsAuthorized, metricsText } from '../observability/metrics-server';
import { traceRequests } from '../observability/tracing';
import { allRoutes, mount, type RouteSpec } from './http/route';
import { unavailableReason } from '../persistence/unavailable';
import { DiskSpace, meterDiskSpace } from '../observability/disk-space';
import { serveConsole } from './console/serve-console';
import { mcpEndpoint } from './mcp/endpoint';
import { RateLimiter } from './http/rate-limits';
import { dummyPasswordHash } from '../security/passwords';
import './routes';

function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  const e = err as { code?: string; status?: number; expose?: boolean; message?: string };
  if (e?.code === '23505')
    return new HttpError(409, 'ConflictError', [{ message: 'A record with the same unique value already exists' }]);
  // An unreachable PostgreSQL or Temporal, or one out of resources (a full disk): 503 with Retry-After.
  const unavailable = unavailableReason(err);
  return unavailable === undefined ? undefined : temporarilyUnavailable(unavailable);
}

/**
 * The api's routes as one router per first path segment (`/api/structures/...` → `structures`): @koa/router
 * tries every route's pattern in turn, and 160 of them took ~7 µs of every request; a segment's router holds
 * a dozen at most. Segments are matched without case, as the routes' patterns are.
 */
class ApiRouters {
  private readonly bySegment = new Map<string, Router>();

  add(spec: RouteSpec, deps: Deps): void {
    const segment = spec.path.split('/')[1].toLowerCase();
    let router = this.bySegment.get(segment);
    if (!router) this.bySegment.set(segment, (router = new Router({ prefix: '/api' })));
    mount(router, spec, deps);
  }

  private segmentOf(path: string): string | undefined {
    return /^\/api\/([^/]+)/i.exec(path)?.[1].toLowerCase();
  }

  routes(): Koa.Middleware {
    const dispatch = new Map([...this.bySegment].map(([segment, router]) => [segment, router.routes()]));
    return (ctx, next) => {
      const routes = dispatch.get(this.segmentOf(ctx.path) ?? '');
      return routes ? routes(ctx as Parameters<typeof routes>[0], next) : next();
    };
  }

  /** The methods a path answers (HEAD with GET), or none when no route has that path. */
  methodsOf(path: string): string[] {
    const router = this.bySegment.get(this.segmentOf(path) ?? '');
    const methods = new Set(router?.match(path, 'GET').path.flatMap((layer) => layer.methods) ?? []);
    return [...methods].sort();
  }
}

export function createApp(deps: Deps): Koa {
  const hub = deps.runUpdates;
  if (hub && !deps.keyCache) {
    // Trusted only while the hub hears of every key change.
    deps.keyCache = new KeyCache(() => hub.listening);
    hub.onKeyChange(deps.keyCache);
  }
  const disk = (deps.disk ??= DiskSpace.fromConfig(deps.config));
  if (deps.config.rateLimits) deps.rateLimiter ??= new RateLimiter(deps.ds, deps.config.rateLimits);
  meterDiskSpace(disk);
  // Made now, so that the first sign-in of an unknown email takes no longer than any other refusal.
  void dummyPasswordHash();
  const app = new Koa({ proxy: true });
  const api = new ApiRouters();
  app.use(traceRequests());
  app.use(async (ctx, next) => {
    const requestId = ctx.get('x-request-id') || randomUUID();
    ctx.set('x-request-id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        // Every method no route declares (TRACE, OPTIONS, ...) on a path that exists: 405 with what is allowed.
        const allowed = api.methodsOf(ctx.path);
        if (!allowed.length) throw notFound(`Route ${ctx.method} ${ctx.path}`);
        ctx.set('Allow', allowed.join(', '));
        throw methodNotAllowed(ctx.method, allowed);
      }
    } catch (err) {
      const known = toHttpError(err);
      const httpErr =
        known ?? new HttpError(500, 'InternalError', [{ message: `Internal error (request id ${requestId})` }]);
      if (!known || httpErr.status >= 500)
        deps.log.error({ err, requestId, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.status = httpErr.status;
      if (httpErr.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(httpErr.retryAfterSeconds));
      ctx.body = { type: httpErr.type, errors: httpErr.errors };
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (deps.log.isLevelEnabled('debug'))
      deps.log.debug({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms }, 'request');
    // By route template (bounded), never the raw path; requests no route matched share one label.
    const labels = { method: ctx.method, route: ctx._matchedRoute?.toString() ?? 'unmatched', status: ctx.status };
    httpRequests.inc(labels);
    httpDuration.observe(labels, ms / 1000);
  });

  const root = new Router();
  root.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  root.get('/ready', async (ctx) => {
    const checks: Record<string, string> = {};
    await Promise.all([
      deps.ds.query('SELECT 1').then(
        () => (checks.database = 'ok'),
        (e) => (checks.database = String(e?.message ?? e)),
      ),
      deps.temporal.workflowService.getSystemInfo({}).then(
        () => (checks.temporal = 'ok'),
        (e: Error) => (checks.temporal = String(e?.message ?? e)),
      ),
      disk.status().then((s) => (checks.disk = s.admitting ? 'ok' : s.reason!)),
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    ctx.status = ready ? 200 : 503;
    if (!ready) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    ctx.body = ready
      ? { status: 'ready', checks }
      : {
          type: 'ServiceUnavailableError',
          errors: Object.entries(checks)
            .filter(([, v]) => v !== 'ok')
            .map(([k, v]) => ({ message: `${k}: ${v}` })),
        };
  });
  // Prometheus metrics of this process (docs/production.md#metrics): outside /api and the OpenAPI document.
  root.get('/metrics', async (ctx) => {
    if (!metricsAuthorized(ctx.get('authorization') || undefined, deps.config.metrics.token))
      throw unauthorized('Authorization: Bearer <METRICS_TOKEN> is required');
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = await metricsText();
  });

  for (const spec of allRoutes()) api.add(spec, deps);
  app.use(api.routes());
  // After the api's routes: /api requests never try these.
  app.use(mcpEndpoint(deps));
  app.use(root.routes());
  app.use(serveConsole(deps.config));

  // Errors after the answer began (a streamed body): to the log, not Koa's console printer. A client that closes
  // once it has read Content-Length bytes (python-requests does) can beat the stream's own end: nothing was lost.
  app.on('error', (err: Error & { code?: string }, ctx?: Koa.Context) => {
    const where = { method: ctx?.method, path: ctx?.path };
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE')
      deps.log.debug(where, 'client closed the connection before the response ended');
    else deps.log.error({ err, ...where }, 'response failed');
  });
  return app;
}

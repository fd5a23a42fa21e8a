// The process's Prometheus metrics (prom-client), served at `GET /metrics` by the api (app.ts) and by the
// worker's metrics listener (metrics-server.ts). One registry per process; the api and the worker record
// different series into it. Labels are bounded sets only: route templates (never raw paths), kinds, statuses.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DataSource } from 'typeorm';

export const registry = new Registry();

/** Seconds: from a few ms (reads) to minutes (long runs, streams). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const RUN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

export const httpRequests = new Counter({
  name: 'tarmac_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'tarmac_http_request_duration_seconds',
  help: 'Time to answer an HTTP request (an event stream: until its headers are sent), by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const jobsCreated = new Counter({
  name: 'tarmac_jobs_created_total',
  help: 'Records created together with the start of their workflow (runs, deployments, jobs), by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const jobsEnded = new Counter({
  name: 'tarmac_jobs_ended_total',
  help: 'Runs, deployments and jobs that reached a terminal status, by kind and status',
  labelNames: ['kind', 'status'] as const,
  registers: [registry],
});

export const queueToStart = new Histogram({
  name: 'tarmac_run_queue_to_start_seconds',
  help: 'From the creation of a run to its start (RUNNING), by kind',
  labelNames: ['kind'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const runDuration = new Histogram({
  name: 'tarmac_run_duration_seconds',
  help: 'From the start of a run (its creation if it never started) to its terminal status, by kind and status',
  labelNames: ['kind', 'status'] as const,
  buckets: RUN_BUCKETS,
  registers: [registry],
});

export const sseConnections = new Gauge({
  name: 'tarmac_sse_connections',
  help: 'Server-Sent Events streams open on this api process',
  registers: [registry],
});

export const sseConnectionsOpened = new Counter({
  name: 'tarmac_sse_connections_opened_total',
  help: 'Server-Sent Events streams opened on this api process',
  registers: [registry],
});

export const notifyLag = new Histogram({
  name: 'tarmac_notify_lag_seconds',
  help: "From a writer's pg_notify (PostgreSQL's clock) to this process hearing it (this host's clock)",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

let started = false;

/**
 * Once per process (api or worker main): the process's CPU, memory and event-loop metrics, and the pool of
 * the process's TypeORM DataSource (node-postgres: total, idle and waiting clients).
 */
export function startProcessMetrics(ds: DataSource): void {
  if (started) return;
  started = true;
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'tarmac_db_pool_connections',
    help: "PostgreSQL connections of this process's pool, by state (total, idle, waiting: callers waiting for one)",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const pool = (ds.driver as unknown as { master?: PoolCounts }).master;
      if (!pool) return;
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
}

interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

export const rateLimitRefusals = new Counter({
  name: 'tarmac_rate_limit_refusals_total',
  help: 'Requests refused 429 by the rate limits (RATE_LIMITS, SIGN_IN_RATE_LIMITS), by the bucket that refused them',
  labelNames: ['bucket'] as const,
  registers: [registry],
});

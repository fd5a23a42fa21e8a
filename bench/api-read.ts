// 1. The API read path: authenticated GET /api/structures/{id} against a bare Koa handler doing the same
// primary-key SELECT with `pg` (no authentication, no routing, no validation, no presentation), both
// loaded by autocannon at the same concurrency, in a worker thread of its own.
import http from 'node:http';
import type net from 'node:net';
import autocannon from 'autocannon';
import Koa from 'koa';
import type { BenchContext } from './support/context';
import { pgPool } from './support/pg';
import { cpuSeconds } from './support/processes';
import { BenchReport, Ratio, table } from './support/stats';

const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;

async function bareServer(databaseUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = pgPool(databaseUrl, 'tarmac-bench-bare');
  const app = new Koa();
  app.use(async (ctx) => {
    const id = /^\/structures\/([0-9a-f-]{36})$/.exec(ctx.path)?.[1];
    if (!id) return;
    const { rows } = await pool.query('SELECT * FROM code_resources WHERE resource_id = $1', [id]);
    if (rows.length) ctx.body = rows[0];
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}

/** `serving`: the process (and thread) that answers, whose CPU time per request is measured. */
async function load(
  url: string,
  headers: Record<string, string>,
  duration: number,
  serving: { pid: number; tid?: number },
) {
  const cpuBefore = cpuSeconds(serving.pid, serving.tid);
  const r = await autocannon({ url, headers, connections: CONNECTIONS, duration, workers: 1 });
  const cpu = cpuSeconds(serving.pid, serving.tid) - cpuBefore;
  if (r['2xx'] === 0) throw new Error(`no successful response from ${url}: ${JSON.stringify(r.statusCodeStats)}`);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    requests: r['2xx'],
    /** CPU time of the serving process per answered request, µs (10 ms ticks: meaningful over thousands). */
    cpuPerRequest: (cpu * 1e6) / Math.max(1, r['2xx']),
    failed: r.errors + r.timeouts + r.non2xx,
  };
}

export async function apiRead(ctx: BenchContext): Promise<BenchReport> {
  const bare = await bareServer(ctx.databaseUrl);
  try {
    const oursUrl = `${ctx.baseUrl}/api/structures/${ctx.structureId}`;
    const bareUrl = `${bare.url}/structures/${ctx.structureId}`;
    const auth = { authorization: `Bearer ${ctx.key}` };
    // Ours: the api process (in-process shape: this one). Bare: this process's main thread (autocannon has a
    // thread of its own).
    const oursPid = ctx.production?.probes.find((p) => p.name === 'api')?.pid ?? process.pid;
    const bareThread = { pid: process.pid, tid: process.pid };
    await load(oursUrl, auth, WARMUP_SECONDS, { pid: oursPid });
    await load(bareUrl, {}, WARMUP_SECONDS, bareThread);
    const ours = await load(oursUrl, auth, ctx.options.duration, { pid: oursPid });
    const baseline = await load(bareUrl, {}, ctx.options.duration, bareThread);

    const row = (name: string, m: typeof ours) => [
      name,
      m.rps,
      m.p50,
      m.p99,
      m.max,
      Math.round(m.cpuPerRequest),
      String(m.requests),
      String(m.failed),
    ];
    const ratios: Ratio[] = [
      { bench: 'api-read', metric: 'throughput', ours: ours.rps, bare: baseline.rps, unit: 'req/s' },
      { bench: 'api-read', metric: 'p50 latency', ours: ours.p50, bare: baseline.p50, unit: 'ms' },
      { bench: 'api-read', metric: 'p99 latency', ours: ours.p99, bare: baseline.p99, unit: 'ms' },
      // What survives a loaded machine: the serving process's CPU time per request (throughput's inverse on
      // an otherwise idle core).
      {
        bench: 'api-read',
        metric: 'CPU per request',
        ours: ours.cpuPerRequest,
        bare: baseline.cpuPerRequest,
        unit: 'µs',
      },
    ];
    return {
      name: 'api-read',
      tables: [
        table(
          `api-read: GET a structure by id, ${CONNECTIONS} connections, ${ctx.options.duration} s each (autocannon)`,
          ['path', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'CPU µs/req', 'requests', 'failed'],
          [row('ours: GET /api/structures/{id}', ours), row('bare: Koa + pg SELECT by key', baseline)],
        ),
      ],
      ratios,
      notes: ['autocannon records latency in whole milliseconds'],
      data: { ours, bare: baseline, connections: CONNECTIONS, duration: ctx.options.duration },
    };
  } finally {
    await bare.close();
  }
}

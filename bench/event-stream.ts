// 3. Event streaming: an event posted with CreateEvents (POST /api/structure-runs/{id}/events) until it
// arrives at each of N concurrent SSE clients of GET .../events/stream, against two bare baselines on the
// same PostgreSQL: one LISTEN/NOTIFY round trip, and a bare SSE fan-out (NOTIFY carrying the frame, one
// LISTEN connection writing it to the same N clients, no table, no auth, no re-read).
import http from 'node:http';
import type net from 'node:net';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { BenchContext } from './support/context';
import { pgClient } from './support/pg';
import { now, SseClientsInput, SseClientsMessage } from './support/sse-clients';
import { BenchReport, Figure, figure, Ratio, sleep, summarize, Summary, table } from './support/stats';
import { mb } from './support/processes';

/** Events per client count; each is sent once the previous one reached every client. */
const EVENTS = 20;
const GAP_MS = 50;
const ROUND_TRIPS = 200;
const EVENT_TIMEOUT_MS = 15_000;

interface FanOut {
  /** Post → arrival, every client and event (ms). */
  delivery: Summary;
  /** Post → arrival at the last of the N clients, per event (ms). */
  all: Summary;
  missing: number;
}

/** Opens N clients, sends EVENTS events one by one with `send(i)`, and times each arrival. */
async function fanOut(input: SseClientsInput, send: (i: number) => Promise<void>): Promise<FanOut> {
  const worker = new Worker(require.resolve('./support/sse-clients'), { workerData: input });
  const waiters = new Map<string, (m: SseClientsMessage) => void>();
  const errors: string[] = [];
  worker.on('message', (m: SseClientsMessage) => {
    if (m.type === 'error') errors.push(m.message);
    const key = m.type === 'event' ? `event:${m.i}` : m.type;
    waiters.get(key)?.(m);
  });
  const next = (key: string, timeoutMs: number) =>
    new Promise<SseClientsMessage | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      waiters.set(key, (m) => {
        clearTimeout(timer);
        waiters.delete(key);
        resolve(m);
      });
    });
  try {
    if (!(await next('ready', 60_000)))
      throw new Error(`${input.n} SSE clients did not all connect: ${errors.slice(0, 3).join('; ')}`);
    const delivery: number[] = [];
    const all: number[] = [];
    let missing = 0;
    for (let i = 0; i < EVENTS; i++) {
      const arrived = next(`event:${i}`, EVENT_TIMEOUT_MS);
      const t = now();
      await send(i);
      const m = await arrived;
      if (m?.type !== 'event') {
        missing++;
        continue;
      }
      for (const a of m.arrivals) delivery.push(a - t);
      all.push(Math.max(...m.arrivals) - t);
      await sleep(GAP_MS);
    }
    return { delivery: summarize(delivery), all: summarize(all), missing };
  } finally {
    const stopped = next('stopped', 5_000);
    worker.postMessage({ type: 'stop' });
    await stopped;
    await worker.terminate();
  }
}

/** The bare fan-out server: GET / opens a stream; every NOTIFY on `channel` is written to all streams. */
async function bareSse(databaseUrl: string, channel: string) {
  const listener = pgClient(databaseUrl, 'tarmac-bench-bare-listen');
  await listener.connect();
  const streams = new Set<http.ServerResponse>();
  let seq = 0;
  listener.on('notification', (msg) => {
    const frame = `id: ${++seq}\ndata: ${msg.payload}\n\n`;
    for (const res of streams) res.write(frame);
  });
  await listener.query(`LISTEN ${channel}`);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write(': bare stream\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await listener.end();
    },
  };
}

async function roundTrips(databaseUrl: string): Promise<Summary> {
  const listener = pgClient(databaseUrl, 'tarmac-bench-round-trip');
  const notifier = pgClient(databaseUrl, 'tarmac-bench-round-trip');
  await Promise.all([listener.connect(), notifier.connect()]);
  try {
    await listener.query('LISTEN bench_round_trip');
    let arrived: (() => void) | undefined;
    listener.on('notification', () => arrived?.());
    const times: number[] = [];
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const got = new Promise<void>((resolve) => (arrived = resolve));
      const t = now();
      await notifier.query(`SELECT pg_notify('bench_round_trip', $1)`, [String(i)]);
      await got;
      times.push(now() - t);
    }
    return summarize(times);
  } finally {
    await Promise.all([listener.end(), notifier.end()]);
  }
}

/** A run that stays RUNNING (the sleeper program) for the streams to follow. */
async function runningRun(ctx: BenchContext): Promise<string> {
  const res = await ctx.http('POST', `/api/structures/${ctx.sleeperId}/runs`, { args: ['600'] });
  if (res.status !== 201) throw new Error(`create run: ${res.status} ${JSON.stringify(res.body)}`);
  const runId: string = res.body.structure_run_id;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    if ((await ctx.http('GET', `/api/structure-runs/${runId}`)).body.status === 'RUNNING') return runId;
  }
  throw new Error(`run ${runId} did not reach RUNNING`);
}

export async function eventStream(ctx: BenchContext): Promise<BenchReport> {
  const runId = await runningRun(ctx);
  const bare = await bareSse(ctx.databaseUrl, 'bench_fanout');
  const notifier = pgClient(ctx.databaseUrl, 'tarmac-bench-notify');
  await notifier.connect();
  const rows: Array<Array<string | number>> = [];
  const ratios: Ratio[] = [];
  const figures: Figure[] = [];
  const data: Record<string, unknown> = {};
  try {
    const rt = await roundTrips(ctx.databaseUrl);
    rows.push(['bare: LISTEN/NOTIFY round trip', '-', rt.p50, rt.p99, '-', '-', String(rt.n)]);
    data.roundTrip = rt;
    for (const n of ctx.options.clients) {
      const [{ event_seq }] = await ctx.stack.ds.query(`SELECT event_seq FROM runs WHERE run_id = $1`, [runId]);
      await ctx.production?.reset(); // the api's peak RSS and event-loop delay of this phase alone
      const ours = await fanOut(
        {
          url: `${ctx.baseUrl}/api/structure-runs/${runId}/events/stream`,
          headers: { authorization: `Bearer ${ctx.key}`, 'last-event-id': String(event_seq) },
          n,
        },
        async (i) => {
          const res = await ctx.http('POST', `/api/structure-runs/${runId}/events`, {
            type: 'BenchTick',
            payload: { bench_i: i },
            timestamp: Date.now() / 1000,
          });
          if (res.status !== 202) throw new Error(`CreateEvents: ${res.status} ${JSON.stringify(res.body)}`);
        },
      );
      const apiProbe = ctx.production?.probes.find((p) => p.name === 'api')?.read();
      const idleProbe = ctx.production?.probes.find((p) => p.name === 'idle')?.read();
      // The bare frame is shaped like ours (the same members), so both write about the same bytes.
      const bareRun = await fanOut({ url: bare.url, headers: {}, n }, async (i) => {
        const frame = {
          event_id: randomUUID(),
          structure_run_id: runId,
          type: 'BenchTick',
          origin: 'USER',
          payload: { bench_i: i },
          timestamp: Date.now() / 1000,
          created_at: new Date().toISOString(),
        };
        await notifier.query(`SELECT pg_notify('bench_fanout', $1)`, [JSON.stringify(frame)]);
      });
      rows.push(
        [
          `ours: CreateEvents → SSE`,
          String(n),
          ours.delivery.p50,
          ours.delivery.p99,
          ours.all.p50,
          ours.all.p99,
          `${ours.delivery.n} (${ours.missing} missing)`,
        ],
        [
          `bare: NOTIFY → SSE`,
          String(n),
          bareRun.delivery.p50,
          bareRun.delivery.p99,
          bareRun.all.p50,
          bareRun.all.p99,
          `${bareRun.delivery.n} (${bareRun.missing} missing)`,
        ],
      );
      ratios.push(
        {
          bench: 'events',
          metric: `delivery p50, ${n} client${n === 1 ? '' : 's'}`,
          ours: ours.delivery.p50,
          bare: bareRun.delivery.p50,
          unit: 'ms',
        },
        {
          bench: 'events',
          metric: `delivery p99, ${n} client${n === 1 ? '' : 's'}`,
          ours: ours.delivery.p99,
          bare: bareRun.delivery.p99,
          unit: 'ms',
        },
      );
      if (n === 1)
        ratios.push({
          bench: 'events',
          metric: 'delivery p50, 1 client vs a NOTIFY round trip',
          ours: ours.delivery.p50,
          bare: rt.p50,
          unit: 'ms',
        });
      // The goals of issue 16 are set at 500 clients; smaller counts are printed for the trend.
      const goal = n >= 500;
      const clients = `${n} SSE client${n === 1 ? '' : 's'}`;
      figures.push(
        figure(
          'events',
          `delivery p99, ${clients}`,
          ours.delivery.p99,
          'ms',
          goal ? { max: 50, below: true } : undefined,
        ),
      );
      if (apiProbe)
        figures.push(
          figure(
            'events',
            `api peak RSS, ${clients}`,
            mb(apiProbe.peakRss),
            'MB',
            goal ? { max: 300, below: true } : undefined,
          ),
          figure(
            'events',
            `api event-loop delay p99, ${clients}`,
            apiProbe.delayP99,
            'ms',
            goal ? { max: 20, below: true } : undefined,
          ),
        );
      if (idleProbe)
        figures.push(
          figure(
            'events',
            `event-loop delay p99 of an idle process (the machine's share), ${clients}`,
            idleProbe.delayP99,
            'ms',
          ),
        );
      data[`clients_${n}`] = { ours, bare: bareRun, apiProbe };
    }
  } finally {
    await notifier.end();
    await bare.close();
    await ctx.http('POST', `/api/structure-runs/${runId}/cancel`);
  }
  return {
    name: 'events',
    tables: [
      table(
        `events: post → arrival at every SSE client, ${EVENTS} events per client count (ms)`,
        ['path', 'clients', 'p50', 'p99', 'all N p50', 'all N p99', 'deliveries'],
        rows,
      ),
    ],
    ratios,
    figures,
    notes: [
      '"all N": until the last of the N clients has the event',
      'ours includes the POST itself (auth, insert, commit); the SSE clients run in a worker thread',
    ],
    data,
  };
}

// N Server-Sent-Events clients in a worker thread of their own (so that reading 500 streams does not run
// on the event loop of the api being measured). Each frame whose data carries `payload.bench_i` is an
// arrival; once all N clients have one for the same i, the thread posts {type: 'event', i, arrivals}
// with each client's arrival time (epoch ms, sub-millisecond: performance.timeOrigin + performance.now()).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

export interface SseClientsInput {
  url: string;
  headers: Record<string, string>;
  n: number;
}

export type SseClientsMessage =
  | { type: 'ready' }
  | { type: 'event'; i: number; arrivals: number[] }
  | { type: 'error'; message: string }
  | { type: 'stopped' };

export const now = () => performance.timeOrigin + performance.now();

function main(): void {
  const { url, headers, n } = workerData as SseClientsInput;
  const port = parentPort!;
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  const arrivals = new Map<number, number[]>();
  let open = 0;
  let stopping = false;

  const arrived = (i: number) => {
    const at = now();
    const list = arrivals.get(i) ?? [];
    list.push(at);
    arrivals.set(i, list);
    if (list.length === n) {
      port.postMessage({ type: 'event', i, arrivals: list } satisfies SseClientsMessage);
      arrivals.delete(i);
    }
  };

  for (let c = 0; c < n; c++) {
    const req = http.get(url, { headers, agent }, (res) => {
      if (res.statusCode !== 200) {
        port.postMessage({ type: 'error', message: `stream answered ${res.statusCode}` } satisfies SseClientsMessage);
        return;
      }
      let buffered = '';
      let counted = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!counted) {
          counted = true; // the first bytes (a comment) say the stream is open
          if (++open === n) port.postMessage({ type: 'ready' } satisfies SseClientsMessage);
        }
        buffered += chunk;
        let cut: number;
        while ((cut = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, cut);
          buffered = buffered.slice(cut + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (!data) continue;
          const i = (JSON.parse(data) as { payload?: { bench_i?: unknown } }).payload?.bench_i;
          if (typeof i === 'number') arrived(i);
        }
      });
    });
    req.on('error', (err) => {
      if (!stopping) port.postMessage({ type: 'error', message: err.message } satisfies SseClientsMessage);
    });
    requests.push(req);
  }

  port.on('message', (msg: { type: 'stop' }) => {
    if (msg.type !== 'stop') return;
    stopping = true;
    for (const r of requests) r.destroy();
    agent.destroy();
    port.postMessage({ type: 'stopped' } satisfies SseClientsMessage);
  });
}

if (parentPort && workerData) main();

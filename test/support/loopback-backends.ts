// Tiny backends for the load balancer's test (test/unit/cli/cluster/load-balancer.test.ts), each a real child
// process on its own loopback address, so that killing one is a process dying (SIGKILL), as an api or a
// Temporal frontend would:
//   - HTTP: GET /ready (200, or 503 after POST /unready until POST /ready), GET /whoami (its name and the
//     X-Forwarded-For it was sent), GET /events (an event stream: one event, 5 s of silence, a second event, the
//     end), POST /hold (never answered) and GET /holds (how many it holds);
//   - TCP: writes its name and a newline on each connection, then echoes.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

const HTTP_BACKEND = `
const http = require('node:http');
const [name, host, port] = process.argv.slice(1);
let ready = true;
let holds = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/ready' && req.method === 'GET') { res.writeHead(ready ? 200 : 503); return res.end(ready ? 'ready' : 'unready'); }
  if (req.url === '/unready' && req.method === 'POST') { ready = false; res.writeHead(204); return res.end(); }
  if (req.url === '/ready' && req.method === 'POST') { ready = true; res.writeHead(204); return res.end(); }
  if (req.url === '/hold' && req.method === 'POST') return void holds++; // never answered
  if (req.url === '/holds') { res.writeHead(200); return res.end(String(holds)); }
  if (req.url === '/whoami') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ name, forwardedFor: req.headers['x-forwarded-for'] ?? null }));
  }
  if (req.url === '/events') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('id: 1\\ndata: {"from":"' + name + '"}\\n\\n');
    return setTimeout(() => res.end('id: 2\\ndata: {"from":"' + name + '"}\\n\\n'), 5000);
  }
  res.writeHead(404); res.end();
});
server.listen(Number(port), host, () => console.log(server.address().port));
`;

const TCP_BACKEND = `
const net = require('node:net');
const [name, host, port] = process.argv.slice(1);
const server = net.createServer((socket) => { socket.write(name + '\\n'); socket.pipe(socket); });
server.listen(Number(port), host, () => console.log(server.address().port));
`;

export interface LoopbackBackend {
  name: string;
  address: string;
  port: number;
  kill(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

/** Starts one; `port` 0 takes a free one (a restarted backend passes its old port to come back where it was). */
function startBackend(script: string, name: string, host: string, port: number): Promise<LoopbackBackend> {
  const child = spawn(process.execPath, ['-e', script, name, host, String(port)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`backend ${name} exited (${code}) before listening`)));
    readline.createInterface({ input: child.stdout! }).once('line', (line) => {
      const bound = Number(line);
      resolve({
        name,
        port: bound,
        address: `${host}:${bound}`,
        kill: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    });
  });
}

export const startHttpBackend = (name: string, host: string, port = 0) => startBackend(HTTP_BACKEND, name, host, port);
export const startTcpBackend = (name: string, host: string, port = 0) => startBackend(TCP_BACKEND, name, host, port);

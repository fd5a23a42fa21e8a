// The production shape's load balancer, a real HAProxy (tools/obtain-haproxy.sh) in front of real child
// processes on their own loopback addresses (test/support/loopback-backends.ts): requests spread over both
// api backends with X-Forwarded-For; an event stream stays open across 5 s of silence; a killed backend
// leaves the rotation within ~2 s and no read fails meanwhile, while a create in flight on it fails rather
// than being done twice; a live backend whose /ready answers 503 leaves too, and a restarted one rejoins;
// a drained one takes no new requests; gRPC's TCP pool spreads connections and drops a killed frontend.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startLoadBalancer, type BackendState, type LoadBalancer } from '../../../../src/cli/cluster/load-balancer';
import { freePort } from '../../../harness/ports';
import { REPO_ROOT } from '../../../support/house';
import { startHttpBackend, startTcpBackend, type LoopbackBackend } from '../../../support/loopback-backends';

const LB_HOST = '127.0.0.40';
const CLIENT_ADDRESS = '127.0.0.9';

/** One GET on a connection of its own, from CLIENT_ADDRESS: status and body. */
function get(url: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, localAddress: CLIENT_ADDRESS, timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function whoami(lb: LoadBalancer): Promise<string> {
  const r = await get(`${lb.httpUrl}/whoami`);
  if (r.status !== 200) throw new Error(`status ${r.status}: ${r.body}`);
  return (JSON.parse(r.body) as { name: string }).name;
}

/** Polls backendStates until `done` holds; resolves to the time it did. */
async function waitForStates(lb: LoadBalancer, done: (s: BackendState[]) => boolean, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const states = await lb.backendStates();
    if (done(states)) return Date.now();
    if (Date.now() > deadline) throw new Error(`backend states: ${JSON.stringify(states)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const inRotation = (states: BackendState[], pool: string, name: string) =>
  states.find((s) => s.pool === pool && s.name === name)?.inRotation ?? false;

/** Requests as fast as they come back, until stopped: each one's start time and who answered (or the error). */
function loadLoop(lb: LoadBalancer) {
  const results: Array<{ at: number; server?: string; error?: string }> = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const at = Date.now();
      results.push(
        await whoami(lb).then(
          (server) => ({ at, server }),
          (e: Error) => ({ at, error: e.message }),
        ),
      );
    }
  };
  const loops = Promise.all([loop(), loop()]);
  return {
    results,
    stop: async () => {
      running = false;
      await loops;
    },
  };
}

describe('load balancer (HAProxy)', function () {
  this.timeout(120_000);
  let dir: string;
  let lb: LoadBalancer;
  let api1: LoopbackBackend;
  let api2: LoopbackBackend;
  let frontend1: LoopbackBackend;
  let frontend2: LoopbackBackend;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-lb-'));
    [api1, api2, frontend1, frontend2] = await Promise.all([
      startHttpBackend('api-1', '127.0.0.41'),
      startHttpBackend('api-2', '127.0.0.42'),
      startTcpBackend('frontend-1', '127.0.0.41'),
      startTcpBackend('frontend-2', '127.0.0.42'),
    ]);
    const backends = (...bs: LoopbackBackend[]) => bs.map(({ name, address }) => ({ name, address }));
    // As the production shape finds it: the last line the obtain script prints.
    const binary = execFileSync('bash', [path.join(REPO_ROOT, 'tools', 'obtain-haproxy.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .trim()
      .split('\n')
      .pop()!;
    lb = await startLoadBalancer({
      dir,
      binary,
      http: { host: LB_HOST, port: await freePort(), backends: backends(api1, api2) },
      grpc: { host: LB_HOST, port: await freePort(), backends: backends(frontend1, frontend2) },
    });
    await waitForStates(lb, (states) => states.length === 4 && states.every((s) => s.status === 'UP'));
  });
  after(async () => {
    await lb?.stop();
    await Promise.all([api1, api2, frontend1, frontend2].map((b) => b?.kill()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('spreads requests over both apis and tells them who called (X-Forwarded-For)', async () => {
    const answers: string[] = [];
    for (let i = 0; i < 20; i++) answers.push(await whoami(lb));
    expect(answers.filter((n) => n === 'api-1').length).to.be.within(5, 15);
    expect(answers.filter((n) => n === 'api-2').length).to.be.within(5, 15);
    const r = await get(`${lb.httpUrl}/whoami`);
    expect(JSON.parse(r.body)).to.have.property('forwardedFor', CLIENT_ADDRESS);
    expect(fs.readFileSync(lb.logFile, 'utf8')).to.include('GET /whoami');
  });

  it('keeps an event stream open across 5 s of silence', async () => {
    const started = Date.now();
    const r = await new Promise<{ type: string; body: string }>((resolve, reject) => {
      http.get(`${lb.httpUrl}/events`, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ type: String(res.headers['content-type']), body }));
        res.on('error', reject);
      });
    });
    expect(r.type).to.equal('text/event-stream');
    expect(r.body).to.match(/id: 1\ndata: .*\n\nid: 2\ndata: .*\n\n$/);
    expect(Date.now() - started).to.be.at.least(4_900);
  });

  it('takes a killed api out of the rotation within ~2 s, and no read fails meanwhile', async () => {
    const load = loadLoop(lb);
    await new Promise((r) => setTimeout(r, 300));
    const killedAt = Date.now();
    await api2.kill();
    const outAt = await waitForStates(lb, (states) => !inRotation(states, 'api', 'api-2'));
    await new Promise((r) => setTimeout(r, 1_000));
    await load.stop();
    const after = load.results.filter((r) => r.at > outAt);
    console.log(
      `      api-2 out ${outAt - killedAt} ms after its kill; ${load.results.length} requests, ${after.length} after`,
    );
    expect(outAt - killedAt).to.be.below(2_500);
    expect(after.length).to.be.greaterThan(10);
    expect(new Set(after.map((r) => r.server))).to.deep.equal(new Set(['api-1']));
    // Before it is out too: a refused connect is retried on the live one, and so is a read in flight at the kill.
    expect(load.results.filter((r) => r.error)).to.deep.equal([]);
    const state = (await lb.backendStates()).find((s) => s.name === 'api-2')!;
    expect(state.lastCheck).to.match(/^L4CON|^L4TOUT|^L7RSP/);
  });

  it('brings a restarted api back, and takes out a live one whose /ready answers 503', async () => {
    api2 = await startHttpBackend('api-2', '127.0.0.42', api2.port);
    await waitForStates(lb, (states) => inRotation(states, 'api', 'api-2'), 5_000);
    const answers = new Set<string>();
    for (let i = 0; i < 10; i++) answers.add(await whoami(lb));
    expect(answers).to.deep.equal(new Set(['api-1', 'api-2']));

    const api1Url = `http://${api1.address}`;
    expect((await get(`${api1Url}/unready`, 'POST')).status).to.equal(204);
    const unreadyAt = Date.now();
    const outAt = await waitForStates(lb, (states) => !inRotation(states, 'api', 'api-1'));
    expect(outAt - unreadyAt).to.be.below(2_500);
    expect((await lb.backendStates()).find((s) => s.name === 'api-1')!.lastCheck).to.equal('L7STS');
    for (let i = 0; i < 10; i++) expect(await whoami(lb)).to.equal('api-2');
    expect((await get(`${api1Url}/whoami`)).status).to.equal(200); // alive all the same, just out
  });

  it('never sends a create that was in flight on a killed api to another (a 502, not a second create)', async () => {
    expect((await get(`http://${api1.address}/ready`, 'POST')).status).to.equal(204);
    await waitForStates(lb, (states) => inRotation(states, 'api', 'api-1'), 5_000);
    const create = get(`${lb.httpUrl}/hold`, 'POST');
    const holds = async (b: LoopbackBackend) => Number((await get(`http://${b.address}/holds`)).body);
    let holder: LoopbackBackend | undefined;
    for (let i = 0; !holder && i < 100; i++) {
      for (const b of [api1, api2]) if ((await holds(b)) === 1) holder = b;
      await new Promise((r) => setTimeout(r, 20));
    }
    if (!holder) throw new Error('neither api received the create');
    const other = holder === api1 ? api2 : api1;
    await holder.kill();
    expect((await create).status).to.equal(502);
    expect(await holds(other)).to.equal(0);
    if (holder === api1) api1 = await startHttpBackend('api-1', '127.0.0.41', api1.port);
    else api2 = await startHttpBackend('api-2', '127.0.0.42', api2.port);
    await waitForStates(lb, (states) => inRotation(states, 'api', holder!.name), 5_000);
  });

  it('drains a server on request and puts it back', async () => {
    await lb.setServerState('api', 'api-2', 'drain');
    const drained = (await lb.backendStates()).find((s) => s.name === 'api-2')!;
    expect(drained.status).to.match(/^DRAIN/);
    expect(drained.inRotation).to.equal(false);
    await lb.setServerState('api', 'api-2', 'ready');
    await waitForStates(lb, (states) => inRotation(states, 'api', 'api-2'));
  });

  it('spreads gRPC connections over both Temporal frontends and drops a killed one', async () => {
    const greet = () =>
      new Promise<string>((resolve, reject) => {
        const [host, port] = lb.grpcAddress!.split(':');
        const socket = net.connect(Number(port), host);
        socket.setEncoding('utf8');
        socket.once('data', (line: string) => {
          socket.end();
          resolve(line.trim());
        });
        socket.once('error', reject);
      });
    const names: string[] = [];
    for (let i = 0; i < 10; i++) names.push(await greet());
    expect(new Set(names)).to.deep.equal(new Set(['frontend-1', 'frontend-2']));

    const killedAt = Date.now();
    await frontend1.kill();
    const outAt = await waitForStates(lb, (states) => !inRotation(states, 'temporal', 'frontend-1'));
    expect(outAt - killedAt).to.be.below(2_500);
    for (let i = 0; i < 10; i++) expect(await greet()).to.equal('frontend-2');
  });
});

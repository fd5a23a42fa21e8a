// The production shape's network faults (src/cli/cluster/network-faults.ts), on this machine's real iptables
// and cgroups: a process started in a host's group is cut from one address and port, both ways, its open
// connection too, while other processes and other ports still connect; healing restores it. As root only.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { expect } from 'chai';
import { openNetworkFaults, type NetworkFaults } from '../../../../src/cli/cluster/network-faults';

const HOST = '127.0.0.71';

/** A child in `group` that keeps one connection to `port` and answers, per line on stdin, whether a round trip and a new connection work. */
const PROBE = `
const net = require('node:net');
const [host, port] = [process.argv[1], Number(process.argv[2])];
const kept = net.connect(port, host);
let answered = () => {};
kept.on('data', () => answered());
kept.on('error', () => {});
const roundTrip = (socket) => new Promise((resolve) => {
  const timer = setTimeout(() => resolve(false), 1500);
  answered = () => { clearTimeout(timer); resolve(true); };
  socket.write('x');
});
const fresh = () => new Promise((resolve) => {
  const s = net.connect(port, host);
  const timer = setTimeout(() => { s.destroy(); resolve(false); }, 1500);
  s.on('connect', () => { clearTimeout(timer); s.destroy(); resolve(true); });
  s.on('error', () => { clearTimeout(timer); resolve(false); });
});
kept.on('connect', () => {
  process.stdout.write('ready\\n');
  process.stdin.on('data', async () => process.stdout.write(JSON.stringify({ kept: await roundTrip(kept), fresh: await fresh() }) + '\\n'));
});
`;

describe('network faults of the production shape', function () {
  this.timeout(30_000);
  let faults: NetworkFaults | undefined;
  let server: net.Server;
  let port: number;

  before(async function () {
    const opened = openNetworkFaults(`tarmac-test-${process.pid}`);
    if ('unavailable' in opened) return this.skip();
    faults = opened;
    server = net.createServer((s) => s.on('data', (d) => s.write(d)));
    await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  after(async () => {
    faults?.close();
    server?.close();
  });

  it('cuts a host from one address and port, both ways and its open connection too, until healed', async () => {
    const group = faults!.groupOf('worker-x');
    const child = spawn(
      'sh',
      ['-c', 'echo $$ > "$1" && shift && exec "$@"', 'sh', group, process.execPath, '-e', PROBE, HOST, String(port)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const lines: string[] = [];
    let waiting: ((line: string) => void) | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter(Boolean)) waiting ? waiting(line) : lines.push(line);
    });
    const next = () =>
      new Promise<string>((resolve) =>
        lines.length ? resolve(lines.shift()!) : (waiting = (l) => ((waiting = undefined), resolve(l))),
      );
    const ask = async () => {
      child.stdin.write('?\n');
      return JSON.parse(await next());
    };
    try {
      expect(await next()).to.equal('ready');
      expect(await ask()).to.deep.equal({ kept: true, fresh: true });
      const cut = faults!.partition('worker-x', { host: HOST, port });
      expect(await ask()).to.deep.equal({ kept: false, fresh: false });
      // This process is in no host's group: it still connects.
      const mine = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, HOST, () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      });
      expect(mine).to.equal(true);
      cut.heal();
      // The kept connection's echo of the dropped byte comes back with TCP's retransmission: a new one at once.
      expect((await ask()).fresh).to.equal(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('refuses to cut a host it did not start in a group', () => {
    expect(() => faults!.partition('nobody', { host: HOST, port })).to.throw(/not started in a group/);
  });
});

// Attacks on the host's network from a run (issue 23: a network namespace per run). One structure run of a
// hostile organization probes everything at once, on an api and a worker of the drill's own whose
// SANDBOX_ALLOW_HOST_PORTS names one loopback service: it looks for the host's listening sockets in
// /proc/net/tcp, connects to a listener on 127.0.0.1 and on the host's own address, listens on a port and
// waits for the host to reach it; and, as controls, posts an event to the api and reaches the allowed
// host:port. Every attack reads its verdict from that one run (it is made once, by the first attack).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { as } from '../../harness/client';
import { waitForRun, PY_PRELUDE } from '../../harness/runs';
import { freePort, getStack, newTenant } from '../../harness/stack';
import { deploy } from '../hostile-tenant';
import { Findings } from '../kit';
import { Processes, startApiProcess, startWorkerProcess } from '../processes';
import type { MachineAttack, MachineAttackContext, MachineAttackResult } from './kit';

const PROBE_PROGRAM = `${PY_PRELUDE}
import socket
T = json.loads(sys.argv[1])
def probe(name, fn):
    try:
        print("PROBE %s %s" % (name, fn()), flush=True)
    except Exception as e:
        print("PROBE %s error %s: %s" % (name, type(e).__name__, e), flush=True)
def connect(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return "reached %s:%d" % (host, port)
    except Exception as e:
        return "blocked %s:%d (%s)" % (host, port, type(e).__name__)
def host_sockets():
    ports = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for line in open(f).read().splitlines()[1:]:
                ports.add(int(line.split()[1].split(":")[1], 16))
        except FileNotFoundError:
            pass
    seen = sorted(p for p in T["host_listeners"] if p in ports)
    return ("seen %s" % seen) if seen else "none of %s" % T["host_listeners"]
probe("host-sockets", host_sockets)
probe("connect-loopback", lambda: connect("127.0.0.1", T["loopback_port"]))
probe("connect-host-address", lambda: connect(T["host_address"], T["host_port"]))
probe("allowed-host-port", lambda: connect("127.0.0.1", T["allowed_port"]))
event = {"type": "StartStructureRunEvent", "timestamp": time.time(), "payload": {}}
probe("reach-api", lambda: "posted %d" % call("POST", "api/structure-runs/" + RUN_ID + "/events", [event]))
def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("0.0.0.0", T["listen_port"]))
    s.listen(8)
    s.settimeout(T["listen_seconds"])
    print("LISTENING %d" % T["listen_port"], flush=True)
    try:
        c, peer = s.accept()
        return "reached from the host (%s)" % (peer,)
    except socket.timeout:
        return "blocked: nothing reached it in %ds" % T["listen_seconds"]
probe("listen-host-port", listen)
print("probes done", flush=True)
`;

type Verdicts = Map<string, MachineAttackResult>;
let outcome: Promise<Verdicts> | undefined;

/** A listener the host keeps while the probe runs (it answers nothing; a connection is the finding). */
async function listener(host: string): Promise<net.Server> {
  const server = net.createServer((c) => c.destroy());
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}
const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

/** Host processes of pasta (the run's network helper) running as a sandbox run uid. */
function helpersOfRunUids(uidFirst: number, uidLast: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${entry}/status`, 'latin1'))?.[1]);
      if (uid < uidFirst || uid > uidLast) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes('pasta')) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/** Connects from the host; resolves with what happened (a refusal is what must happen). */
function connectFromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 2000 });
    s.once('connect', () => {
      s.destroy();
      resolve(`the host reached ${host}:${port}`);
    });
    s.once('timeout', () => {
      s.destroy();
      resolve(`${host}:${port} timed out`);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(`${host}:${port} ${err.code}`));
  });
}

async function probeOnce(ctx: MachineAttackContext): Promise<Verdicts> {
  const { config } = getStack();
  const f = new Findings('hostile-machine-network', 'network probes');
  const procs = new Processes();
  const servers: net.Server[] = [];
  const verdicts: Verdicts = new Map();
  try {
    const loopback = await listener('127.0.0.1');
    const everywhere = await listener('0.0.0.0');
    const allowed = await listener('127.0.0.1');
    servers.push(loopback, everywhere, allowed);
    const queue = `drill-netns-${randomBytes(6).toString('hex')}`;
    const api = await startApiProcess(procs, 'netns-api', { TEMPORAL_TASK_QUEUE: queue });
    await startWorkerProcess(procs, 'netns-worker', {
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
      SANDBOX_ALLOW_HOST_PORTS: `127.0.0.1:${portOf(allowed)}`,
    });
    const tenant = await newTenant('drill-netns');
    const { structureId } = await deploy(tenant.key, api.baseUrl, { 'structure.py': PROBE_PROGRAM });
    const hostAddress =
      Object.values(os.networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? '127.0.0.2';
    const listenPort = await freePort();
    const listenSeconds = ctx.quick ? 3 : 6;
    const targets = {
      host_listeners: [
        Number(new URL((getStack().ds.options as { url: string }).url).port),
        Number(getStack().env.address.split(':').pop()),
        portOf(loopback),
        portOf(everywhere),
      ],
      loopback_port: portOf(loopback),
      host_address: hostAddress,
      host_port: portOf(everywhere),
      allowed_port: portOf(allowed),
      listen_port: listenPort,
      listen_seconds: listenSeconds,
    };
    const uidLast = config.sandbox.uidBase + config.sandbox.uidCount - 1;
    // Helpers of other runs on this host (another worker's) are not this run's.
    const helpersBefore = new Set(helpersOfRunUids(config.sandbox.uidBase, uidLast));
    const started = await as(tenant.key, api.baseUrl).post(`/api/structures/${structureId}/runs`, {
      args: [JSON.stringify(targets)],
      env_vars: [],
    });
    if (started.status !== 201) throw new Error(`starting the probe run answered ${started.status} ${started.text}`);
    const runId: string = started.body.structure_run_id;
    const logsOf = async (): Promise<string[]> =>
      (await as(tenant.key, api.baseUrl).get(`/api/structure-runs/${runId}/logs`)).body.logs ?? [];

    // While the run listens, the host tries its port on loopback and on the host's own address.
    const deadline = Date.now() + 60_000;
    let fromHost = 'the run never listened';
    while (Date.now() < deadline) {
      const logs = await logsOf();
      if (logs.some((l) => l.startsWith('LISTENING'))) {
        const tries = await Promise.all([
          connectFromHost('127.0.0.1', listenPort),
          connectFromHost(hostAddress, listenPort),
        ]);
        fromHost = tries.join('; ');
        break;
      }
      if (logs.includes('probes done')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const run = await waitForRun(tenant.key, runId, undefined, 60_000, api.baseUrl);
    const logs = await logsOf();
    const line = (name: string) =>
      logs.find((l) => l.startsWith(`PROBE ${name} `))?.slice(`PROBE ${name} `.length) ?? 'no answer';
    const blocked = (name: string) => ({ held: line(name).startsWith('blocked'), result: line(name) });
    verdicts.set('host-sockets', { held: line('host-sockets').startsWith('none'), result: line('host-sockets') });
    verdicts.set('connect-loopback', blocked('connect-loopback'));
    verdicts.set('connect-host-address', blocked('connect-host-address'));
    const listened = line('listen-host-port');
    verdicts.set('listen-host-port', {
      held: listened.startsWith('blocked') && !fromHost.includes('reached'),
      result: `${fromHost}; in the run: ${listened}`,
    });
    const posted = /^posted (\d+)/.exec(line('reach-api'));
    verdicts.set('reach-api', {
      held: Boolean(posted) && Number(posted![1]) < 300,
      result: `${line('reach-api')} (GT_CLOUD_BASE_URL ${api.baseUrl}, forwarded into the run)`,
    });
    verdicts.set('allowed-host-port', {
      held: line('allowed-host-port').startsWith('reached'),
      result: line('allowed-host-port'),
    });
    await new Promise((r) => setTimeout(r, 500));
    const left = helpersOfRunUids(config.sandbox.uidBase, uidLast).filter((pid) => !helpersBefore.has(pid));
    verdicts.set('helper-leftover', {
      held: left.length === 0,
      result: left.length ? `pasta pids ${left.join(',')} alive after the run` : 'no network helper after the run',
    });
    ctx.note(`probe run ${run.status}; ${logs.filter((l) => l.startsWith('PROBE')).length} probes`);
  } finally {
    for (const s of servers) s.close();
    await procs.stopAll(f);
  }
  return verdicts;
}

function attack(name: string, limit: string): MachineAttack {
  return {
    name: `netns-${name}`,
    limit,
    async run(ctx) {
      outcome ??= probeOnce(ctx);
      return (await outcome).get(name) ?? { held: false, result: 'not probed' };
    },
  };
}

export const attacks: MachineAttack[] = [
  attack('host-sockets', "a network namespace per run: the host's sockets are not in its /proc/net/tcp"),
  attack('connect-loopback', 'its own loopback; only the api and SANDBOX_ALLOW_HOST_PORTS are forwarded'),
  attack('connect-host-address', "the run-uid firewall, which the helper's traffic meets"),
  attack('listen-host-port', 'pasta forwards nothing inwards (-t none -u none)'),
  attack('reach-api', 'control: GT_CLOUD_BASE_URL forwarded into the namespace'),
  attack('allowed-host-port', 'control: SANDBOX_ALLOW_HOST_PORTS=127.0.0.1:<port>'),
  attack('helper-leftover', 'the helper ends with its run (and dies with the launcher)'),
];

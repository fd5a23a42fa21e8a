// The sandbox's proof on this host (Sandbox.open runs it before the worker takes work): a probe spawned the way
// runs are must run as its run uid without privileges, under the seccomp filter, in a network namespace of its
// own that sees none of the host's sockets, and reach no local port.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { signalGroup } from '../process/user-process';
import { spawnDetached } from '../process/spawn';
import type { SandboxConfig } from '../../config';
import type { SandboxIdentity, SandboxSpec, Wrapped } from './sandbox-types';

/** What the probe uses of a Sandbox. */
interface Probed {
  config: Pick<SandboxConfig, 'gidBase' | 'stateDir' | 'uidBase' | 'uidCount'>;
  identity(gid: number, memoryBytes: number): Promise<SandboxIdentity | undefined>;
  wrap(spec: SandboxSpec): Wrapped;
}

/**
 * How long the probe may take. It takes well under a second on an idle host, but on one whose CPUs are
 * taken (a load of 40 on 2 cores) its half-dozen short processes can wait many seconds for a core: a tight
 * limit there refused to start a worker that isolates perfectly well.
 */
const PROBE_TIME_LIMIT_MS = 60_000;

export async function probeSandbox(sandbox: Probed, opts: { rootless: boolean; seccomp: boolean }): Promise<void> {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const hostAddress = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  const targets = ['127.0.0.1', ...(hostAddress ? [hostAddress] : [])];
  const identity = await sandbox.identity(sandbox.config.gidBase, 512 * 1024 * 1024);
  const home = fs.mkdtempSync(path.join(sandbox.config.stateDir, 'probe-'));
  try {
    const script =
      'id -u; grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/self/status; ls /proc | grep -cE "^[0-9]+$"; ' +
      'echo "netns: $(readlink /proc/self/ns/net)"; ' +
      `echo "listeners: $(grep -ci ':${port.toString(16).padStart(4, '0')} ' /proc/net/tcp /proc/net/tcp6 | awk -F: '{n += $2} END {print n}')"; ` +
      targets
        // A refused connection is dropped rather than reset by this version of pasta: a connection that
        // is not made in 2 s was not allowed (an allowed one is made in milliseconds).
        .map(
          (t) =>
            `timeout 2 bash -c 'exec 3<>/dev/tcp/${t}/${port}' 2>/dev/null && echo "${t}: reached" || echo "${t}: blocked"`,
        )
        .join('; ');
    const w = sandbox.wrap({
      file: '/bin/bash',
      argv: ['-c', script],
      cwd: '/',
      home,
      memoryBytes: 512 * 1024 * 1024,
      identity,
    });
    let out = '';
    let err = '';
    // Spawned the way runs are, so the probe proves that path.
    const child = await spawnDetached({ ...w, cwd: '/', env: { PATH: '/usr/bin:/bin' } });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(child.pid, 'SIGKILL');
    }, PROBE_TIME_LIMIT_MS);
    const read = (s: Readable) =>
      new Promise<string>((resolve) => {
        let text = '';
        s.on('data', (d: Buffer) => (text += d.toString()));
        s.once('close', () => resolve(text));
      });
    [out, err] = await Promise.all([read(child.stdout), read(child.stderr)]);
    const code = (await child.exited).code;
    clearTimeout(timer);
    if (timedOut)
      throw new Error(
        `the sandbox probe did not finish in ${PROBE_TIME_LIMIT_MS / 1000} s (it takes well under a second on an idle ` +
          'host: is this machine overloaded?)',
      );
    if (code !== 0) throw new Error(`the sandbox probe did not run (exit ${code}): ${err.trim().slice(0, 300)}`);
    const lines = out.trim().split('\n');
    const field = (name: string) => lines.find((l) => l.startsWith(`${name}:`))?.split(/\s+/)[1];
    // Rootless: root of its own user namespace (the worker's uid outside), without capabilities.
    const runUid = opts.rootless ? 0 : identity!.uid;
    if (Number(lines[0]) !== runUid) throw new Error(`the probe ran as uid ${lines[0]}, not its run uid ${runUid}`);
    if (field('NoNewPrivs') !== '1' || !/^0+$/.test(field('CapEff') ?? ''))
      throw new Error('the probe kept privileges');
    if (opts.seccomp && field('Seccomp') !== '2') throw new Error('the seccomp filter was not applied');
    if (field('netns') === fs.readlinkSync('/proc/self/ns/net'))
      throw new Error("the probe shared the host's network namespace");
    if (field('listeners') !== '0') throw new Error("the probe saw the host's listening sockets in /proc/net/tcp");
    const reached = targets.filter((t) => field(t) !== 'blocked');
    if (reached.length && opts.rootless) {
      throw new Error(
        `a sandboxed process reached a local port (${reached.join(', ')}): the packet filter of its network namespace did not hold (iptables-restore, nsenter)`,
      );
    }
    if (reached.length) {
      throw new Error(
        `a sandboxed process reached a local port (${reached.join(', ')}): no firewall for run uids (install iptables and run the worker ` +
          `as root or with CAP_NET_ADMIN, or install the rules of docs/security.md for uids ${sandbox.config.uidBase}-${sandbox.config.uidBase + sandbox.config.uidCount - 1})`,
      );
    }
  } finally {
    server.close();
    fs.rmSync(home, { recursive: true, force: true });
    await identity?.release();
  }
}

// Network faults between the production shape's hosts (the cluster drill's partition of a worker from
// PostgreSQL). Every host of the shape shares this machine's loopback, so a host is told apart by its control
// group: a host started in its group (`groupOf`) has every connection it opens marked (conntrack's mark, set at
// the connection's first packet), and a partition drops every packet, both ways, of that host's connections to
// one address and port, those already open included, as a cut cable would. Healing removes the rule; TCP's
// retransmissions carry the connections on. The rules live in a chain of their own, hooked first in OUTPUT
// (loopback traffic passes OUTPUT both ways); `close` removes the chain and the groups.
// Needs root, a cgroup v2 hierarchy (the unified one of a hybrid host is enough) and iptables with the cgroup,
// connmark and conntrack matches: `openNetworkFaults` answers why not otherwise.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { mounts, ownGroups } from '../../runtime/sandbox/cgroup-fs';

export interface Partition {
  /** Removes the partition. */
  heal(): void;
}

export interface NetworkFaults {
  /** The cgroup.procs file a host writes itself into before it becomes its program (its connections marked). */
  groupOf(host: string): string;
  /** Cuts `host` (started in its group) from `target` (host:port), both ways, until healed. */
  partition(host: string, target: { host: string; port: number }): Partition;
  close(): void;
}

const iptables = (...args: string[]) => execFileSync('iptables', ['-w', ...args], { stdio: 'pipe' });

/** A group's controllers passed down to its children: on a pure v2 host a worker's sandbox needs them. */
function delegateControllers(dir: string): void {
  try {
    const controllers = fs.readFileSync(path.join(dir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    const wanted = controllers.filter((c) => ['cpu', 'memory', 'pids'].includes(c));
    if (wanted.length) fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
  } catch {
    // A group with processes of its own cannot delegate; the sandbox then says what it lacks.
  }
}

export function openNetworkFaults(name: string): NetworkFaults | { unavailable: string } {
  if (process.getuid?.() !== 0) return { unavailable: 'network faults need root (iptables)' };
  const unified = mounts().find((m) => m.type === 'cgroup2');
  const own = ownGroups().get('');
  if (!unified || own === undefined) return { unavailable: 'no cgroup v2 hierarchy to tell the hosts apart' };
  const groupPath = path.posix.join(own, name);
  const groupDir = path.join(unified.point, groupPath);
  const chain = `TARMAC_${name.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}`.slice(0, 28);
  try {
    fs.mkdirSync(groupDir, { recursive: true });
    delegateControllers(path.dirname(groupDir));
    delegateControllers(groupDir);
    iptables('-N', chain);
    iptables('-I', 'OUTPUT', '1', '-j', chain);
  } catch (err) {
    return { unavailable: `cannot set up the hosts' groups and chain ${chain}: ${(err as Error).message}` };
  }
  const marks = new Map<string, number>();
  const markOf = (host: string) => {
    const mark = marks.get(host);
    if (mark === undefined) throw new Error(`${host} was not started in a group of the network faults`);
    return mark;
  };
  return {
    groupOf(host) {
      const dir = path.join(groupDir, host);
      fs.mkdirSync(dir, { recursive: true });
      if (!marks.has(host)) {
        const mark = 0x7a000 + marks.size + 1;
        marks.set(host, mark);
        iptables(
          '-A',
          chain,
          '-m',
          'cgroup',
          '--path',
          path.posix.join(groupPath, host),
          '-m',
          'conntrack',
          '--ctstate',
          'NEW',
          '-j',
          'CONNMARK',
          '--set-mark',
          String(mark),
        );
      }
      return path.join(dir, 'cgroup.procs');
    },
    partition(host, target) {
      const rule = [
        '-m',
        'connmark',
        '--mark',
        String(markOf(host)),
        '-p',
        'tcp',
        '-m',
        'conntrack',
        '--ctorigdst',
        target.host,
        '--ctorigdstport',
        String(target.port),
        '-j',
        'DROP',
      ];
      iptables('-A', chain, ...rule);
      let healed = false;
      return {
        heal() {
          if (healed) return;
          healed = true;
          iptables('-D', chain, ...rule);
        },
      };
    },
    close() {
      for (const args of [
        ['-D', 'OUTPUT', '-j', chain],
        ['-F', chain],
        ['-X', chain],
      ])
        try {
          iptables(...args);
        } catch {
          // already gone
        }
      // A group still holding a process (one being killed) stays: empty groups go with the next boot.
      for (const dir of [...[...marks.keys()].map((host) => path.join(groupDir, host)), groupDir])
        try {
          fs.rmdirSync(dir);
        } catch {
          // not empty yet
        }
    },
  };
}

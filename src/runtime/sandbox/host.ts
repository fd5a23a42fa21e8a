// What the sandbox reads of the host: the paths of its root that a sandbox shows, its DNS resolvers, and the
// addresses and ports runs may reach (the api, SANDBOX_ALLOW_HOST_PORTS, the platform's own `reach`).
import fs from 'node:fs';
import net from 'node:net';
import { lookup } from 'node:dns/promises';
import type { SandboxConfig } from '../../config';

let mounts: string[] | undefined;

/**
 * Paths of the host's root that a sandbox shows: symlinks (merged /usr) as symlinks, directories read-only.
 * Read once: the host's root does not change while the worker runs, and every spawn needs it.
 */
export function systemMounts(): string[] {
  if (mounts) return mounts;
  const args = ['--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc'];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const p = `/${name}`;
    try {
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(p), p);
      else if (st.isDirectory()) args.push('--ro-bind', p, p);
    } catch {
      // not on this host
    }
  }
  mounts = args;
  return args;
}

/** The addresses of `host` (an IP address as it is, a name resolved). */
export async function addressesOf(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  return net.isIP(bare) ? [bare] : (await lookup(bare, { all: true }).catch(() => [])).map((a) => a.address);
}

export function resolvers(): string[] {
  try {
    return [...fs.readFileSync('/etc/resolv.conf', 'utf8').matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) =>
      m[1].replace(/%.*$/, ''),
    );
  } catch {
    return [];
  }
}

/** Where runs may connect besides the outside world: the api, and single services by address and port. */
export interface Reach {
  api: { addresses: string[]; port: number };
  allowHostPorts: Array<{ address: string; port: number }>;
}

/**
 * The api's addresses and port, and the single services runs may reach: the operator's
 * (SANDBOX_ALLOW_HOST_PORTS) and the platform's own (`urls`: the code host a build clones from).
 */
export async function reachOf(config: SandboxConfig, apiBaseUrl: string, urls: string[]): Promise<Reach> {
  const api = new URL(apiBaseUrl);
  const apiPort = Number(api.port || (api.protocol === 'https:' ? 443 : 80));
  const reach = urls
    .map((u) => new URL(u))
    .filter((u) => /^https?:$/.test(u.protocol))
    .map((u) => ({ host: u.hostname, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) }));
  const allowHostPorts = (
    await Promise.all(
      [...config.allowHostPorts, ...reach].map(async (a) =>
        (await addressesOf(a.host)).map((address) => ({ address, port: a.port })),
      ),
    )
  ).flat();
  return { api: { addresses: await addressesOf(api.hostname), port: apiPort }, allowHostPorts };
}

// The rootless mode's part of a sandbox (isolation.ts): every run is the worker's uid on the host, and its
// network namespace gets its own packet filter (namespace-firewall.ts), loaded by the launcher (network.ts)
// as root of the run's user namespace.
import { thisHostsAddresses } from '../../security/outbound-policy';
import type { Reach } from './host';
import { resolvers } from './host';
import { rootlessTools } from './isolation';
import { namespaceRules } from './namespace-firewall';

/** The rootless mode (isolation.ts): what a run is on the host, and how its namespace gets its firewall. */
export interface Rootless {
  /** The worker's own ids: every run's on the host, root of the run's user namespace inside. */
  uid: number;
  gid: number;
  /** The launcher's setup step: loads namespaceRules() into the run's namespaces (network.ts). */
  firewall: string[];
  /** No control group: memory is RLIMIT_AS per process. */
  perProcess: boolean;
}

/** The rootless setup: the worker's ids, and the launcher's step that loads the run's packet filter. */
export async function rootlessSetupOf(
  sh: string,
  reach: Reach & { allowCidrs: string[] },
  perProcess: boolean,
): Promise<Rootless> {
  const t = rootlessTools();
  const plan = {
    api: reach.api,
    resolvers: resolvers(),
    allowCidrs: reach.allowCidrs,
    allowHostPorts: reach.allowHostPorts,
    hostAddresses: await thisHostsAddresses(),
  };
  return {
    uid: process.geteuid!(),
    gid: process.getegid!(),
    perProcess,
    // As root of the run's user namespace (the worker's uid, mapped there), over its network namespace only.
    firewall: [
      t.nsenter!,
      '--target',
      '@child@',
      '--user',
      '--net',
      '--preserve-credentials',
      '--',
      sh,
      '-c',
      'printf "%s" "$1" | "$2" && printf "%s" "$3" | "$4"',
      'tarmac-firewall',
      namespaceRules(plan, 4),
      t.iptablesRestore!,
      namespaceRules(plan, 6),
      t.ip6tablesRestore!,
    ],
  };
}

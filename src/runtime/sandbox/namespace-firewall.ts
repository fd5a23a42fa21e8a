// The network boundary of user code in the rootless mode (isolation.ts): without root there is no owner-matched
// rule on the host (firewall.ts), because every run's helper runs as the worker's own uid. Instead each run's
// network namespace gets its own packet filter, written before anything of the run starts. The run's user
// namespace is owned by the worker's user, so the launcher (network.ts) may enter it with every capability
// over that namespace alone, and `iptables-restore` loads these rules there; the run's own processes have no
// capability (bubblewrap drops them all, and the seccomp filter refuses setns and unshare), so they cannot
// change them. The same list as the root mode's (src/security/outbound-policy.ts), judged inside:
//
//   OUTPUT: ACCEPT to the namespace's own loopback (where pasta forwards the api's port and the allowed
//           host ports of the host's loopback), the api's address and port, the resolvers, SANDBOX_ALLOW_CIDRS,
//           SANDBOX_ALLOW_HOST_PORTS; REJECT every address of this host (read at the worker's start), then
//           the refused ranges of the outbound address policy; the rest (the internet) goes out through pasta.
//
// A refused connection is reset at once inside the namespace (the root mode's helper drops it instead).
import { firewallRanges } from '../../security/outbound-policy';
import type { FirewallPlan } from './firewall';
import net from 'node:net';

export interface NamespaceFirewallPlan extends Omit<FirewallPlan, 'uidFirst' | 'uidLast'> {
  /** Every address of this host: remote from inside a run's namespace, so they must be refused by name. */
  hostAddresses: string[];
}

const familyOf = (addressOrCidr: string): 4 | 6 => (net.isIPv6(addressOrCidr.split('/')[0]) ? 6 : 4);

/** The `iptables-restore` input for one family. */
export function namespaceRules(plan: NamespaceFirewallPlan, family: 4 | 6): string {
  const of = <T>(list: T[], address: (t: T) => string) => list.filter((t) => familyOf(address(t)) === family);
  const lines = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD DROP [0:0]', ':OUTPUT ACCEPT [0:0]'];
  const accept = (rule: string) => lines.push(`-A OUTPUT ${rule} -j ACCEPT`);
  const reject = (cidr: string) =>
    lines.push(
      `-A OUTPUT -d ${cidr} -p tcp -j REJECT --reject-with tcp-reset`,
      `-A OUTPUT -d ${cidr} -j REJECT --reject-with ${family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable'}`,
    );
  accept('-o lo');
  for (const address of of(plan.api.addresses, (a) => a)) accept(`-d ${address} -p tcp --dport ${plan.api.port}`);
  for (const resolver of of(plan.resolvers, (a) => a))
    for (const proto of ['udp', 'tcp']) accept(`-d ${resolver} -p ${proto} --dport 53`);
  for (const cidr of of(plan.allowCidrs, (c) => c)) accept(`-d ${cidr}`);
  for (const { address, port } of of(plan.allowHostPorts, (a) => a.address))
    for (const proto of ['tcp', 'udp']) accept(`-d ${address} -p ${proto} --dport ${port}`);
  for (const address of new Set(of(plan.hostAddresses, (a) => a).map((a) => a.replace(/%.*$/, '')))) reject(address);
  for (const cidr of firewallRanges(family)) reject(cidr);
  lines.push('COMMIT', '');
  return lines.join('\n');
}

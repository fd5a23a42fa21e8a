// The network boundary of user code on a host where it shares the network with the platform: owner-matched
// packet filter rules (iptables, both families) for the whole run-uid range. Sandboxed processes may reach
// the internet, the DNS resolvers and the api's own address and port; never a local address of this host
// (PostgreSQL, the Temporal frontend, the worker, model servers on loopback), private or link-local ranges
// (cloud metadata at 169.254.169.254), unless the operator lists a range in SANDBOX_ALLOW_CIDRS.
//
//   OUTPUT               -m owner --uid-owner <range> -j TARMAC_SANDBOX
//   TARMAC_SANDBOX       -j TARMAC_SANDBOX_ALLOW; REJECT local addresses; REJECT private ranges
//   TARMAC_SANDBOX_ALLOW per worker (comment "tarmac worker <pid>"): ACCEPT api, resolvers, allowed CIDRs
//
// The static chain is only ever appended to (never flushed), so there is no moment without it; each worker
// adds its own ACCEPT rules and removes those of workers that are gone.
import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { firewallRanges } from '../../security/outbound-policy';
import { findTool } from '../process/confine';
import { processExists } from './processes';

const run = promisify(execFile);
const CHAIN = 'TARMAC_SANDBOX';
const ALLOW = 'TARMAC_SANDBOX_ALLOW';

/** The outbound address policy's refused ranges (src/security/outbound-policy.ts): one list for both. */
const BLOCKED: Record<4 | 6, string[]> = { 4: firewallRanges(4), 6: firewallRanges(6) };

export interface FirewallPlan {
  uidFirst: number;
  uidLast: number;
  /** Where user code may reach the api (GT_CLOUD_BASE_URL): its resolved addresses and port. */
  api: { addresses: string[]; port: number };
  resolvers: string[];
  allowCidrs: string[];
}

/** iptables -S prints a host range as /32 (/128) and IPv6 in its shortest form; compare what it printed. */
function sameCidr(listed: string, printed: string): boolean {
  const [a, bits] = listed.split('/');
  const [b, printedBits] = printed.split('/');
  const family = net.isIPv6(a) ? 6 : 4;
  if (family !== (net.isIPv6(b) ? 6 : 4)) return false;
  const full = String(family === 6 ? 128 : 32);
  if ((bits ?? full) !== (printedBits ?? full)) return false;
  const list = new net.BlockList();
  list.addAddress(a, family === 6 ? 'ipv6' : 'ipv4');
  return list.check(b, family === 6 ? 'ipv6' : 'ipv4');
}

const familyOf = (addressOrCidr: string): 4 | 6 => (net.isIPv6(addressOrCidr.split('/')[0]) ? 6 : 4);

/** Splits one line of `iptables -S` into arguments (comments are the only quoted values). */
function splitRule(line: string): string[] {
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1] : m[2]));
}

export class Firewall {
  private constructor(private readonly tools: Record<4 | 6, string | undefined>) {}

  /** The iptables of this host, or undefined when it has none. */
  static onThisHost(): Firewall | undefined {
    const v4 = findTool('iptables');
    return v4 ? new Firewall({ 4: v4, 6: findTool('ip6tables') }) : undefined;
  }

  private ipt(family: 4 | 6, args: string[]) {
    return run(this.tools[family]!, ['-w', '5', ...args]);
  }

  private async ensure(family: 4 | 6, chain: string, rule: string[], position?: number) {
    try {
      await this.ipt(family, ['-C', chain, ...rule]);
    } catch {
      await this.ipt(family, position ? ['-I', chain, String(position), ...rule] : ['-A', chain, ...rule]);
    }
  }

  /** Installs the static chains and this worker's ACCEPT rules; removes those of dead workers. */
  async install(plan: FirewallPlan): Promise<void> {
    const tag = `tarmac worker ${process.pid}`;
    for (const family of [4, 6] as const) {
      if (!this.tools[family]) continue;
      try {
        await this.installFamily(family, plan, tag);
      } catch (err) {
        // A host without IPv6 filtering has no IPv6 to guard; IPv4 must work.
        if (family === 4) throw err;
      }
    }
  }

  private async installFamily(family: 4 | 6, plan: FirewallPlan, tag: string) {
    for (const chain of [ALLOW, CHAIN]) await this.ipt(family, ['-N', chain]).catch(() => undefined);
    await this.ensure(family, CHAIN, ['-j', ALLOW]);
    await this.ensure(family, CHAIN, [
      '-p',
      'tcp',
      '-m',
      'addrtype',
      '--dst-type',
      'LOCAL',
      '-j',
      'REJECT',
      '--reject-with',
      'tcp-reset',
    ]);
    await this.ensure(family, CHAIN, ['-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'REJECT']);
    for (const cidr of BLOCKED[family]) await this.ensure(family, CHAIN, ['-d', cidr, '-j', 'REJECT']);
    await this.removeStaleRanges(family);
    await this.ensure(
      family,
      'OUTPUT',
      ['-m', 'owner', '--uid-owner', `${plan.uidFirst}-${plan.uidLast}`, '-j', CHAIN],
      1,
    );

    await this.removeRules(family, (comment) => {
      // Rules of processes that are gone (a crashed worker, a drill's witness) go too.
      const pid = Number(/^tarmac .* (\d+)$/.exec(comment)?.[1]);
      return comment === tag || (Number.isInteger(pid) && pid > 0 && !processExists(pid));
    });
    const mine = (rule: string[]) =>
      this.ipt(family, ['-A', ALLOW, ...rule, '-m', 'comment', '--comment', tag, '-j', 'ACCEPT']);
    for (const address of plan.api.addresses.filter((a) => familyOf(a) === family)) {
      await mine(['-d', address, '-p', 'tcp', '--dport', String(plan.api.port)]);
    }
    for (const resolver of plan.resolvers.filter((a) => familyOf(a) === family)) {
      for (const proto of ['udp', 'tcp']) await mine(['-d', resolver, '-p', proto, '--dport', '53']);
    }
    for (const cidr of plan.allowCidrs.filter((c) => familyOf(c) === family)) await mine(['-d', cidr]);
  }

  /**
   * Removes REJECT rules of ranges that are no longer on the list (written by an earlier version): the static
   * chain outlives workers, and a stale range would keep refusing what the policy now allows.
   */
  private async removeStaleRanges(family: 4 | 6) {
    const { stdout } = await this.ipt(family, ['-S', CHAIN]);
    for (const line of stdout.split('\n')) {
      const args = splitRule(line);
      if (args[0] !== '-A' || args[2] !== '-d' || args[4] !== '-j' || args[5] !== 'REJECT') continue;
      const cidr = args[3];
      if (BLOCKED[family].some((b) => sameCidr(b, cidr))) continue;
      await this.ipt(family, ['-D', ...args.slice(1)]).catch(() => undefined);
    }
  }

  /** Removes this worker's ACCEPT rules (on shutdown). */
  async uninstall(): Promise<void> {
    const tag = `tarmac worker ${process.pid}`;
    for (const family of [4, 6] as const) {
      if (this.tools[family]) await this.removeRules(family, (comment) => comment === tag).catch(() => undefined);
    }
  }

  private async removeRules(family: 4 | 6, match: (comment: string) => boolean) {
    const { stdout } = await this.ipt(family, ['-S', ALLOW]);
    for (const line of stdout.split('\n')) {
      if (!line.startsWith(`-A ${ALLOW} `)) continue;
      const args = splitRule(line);
      const comment = args[args.indexOf('--comment') + 1] ?? '';
      if (match(comment)) await this.ipt(family, ['-D', ...args.slice(1)]).catch(() => undefined);
    }
  }
}

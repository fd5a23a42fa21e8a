// The rootless mode's packet filter (src/runtime/sandbox/namespace-firewall.ts): what it lets out and refuses,
// in which order, and that iptables-restore takes it as written (loaded into a fresh network namespace).
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { namespaceRules } from '../../../../src/runtime/sandbox/namespace-firewall';
import { firewallRanges } from '../../../../src/security/outbound-policy';

const plan = {
  api: { addresses: ['127.0.0.1', '203.0.113.7'], port: 8080 },
  resolvers: ['10.0.0.53', 'fd00::53'],
  allowCidrs: ['10.9.0.0/16'],
  allowHostPorts: [{ address: '192.168.1.5', port: 5432 }],
  hostAddresses: ['198.51.100.4', 'fe80::1%eth0', '127.0.0.1'],
};

const rules = (family: 4 | 6) => namespaceRules(plan, family).split('\n');

describe('rootless namespace firewall', () => {
  it('accepts its loopback, the api, the resolvers and the allowed destinations before any REJECT', () => {
    const v4 = rules(4);
    const firstReject = v4.findIndex((l) => l.includes('-j REJECT'));
    const accepts = v4.filter((l) => l.endsWith('-j ACCEPT'));
    expect(accepts.every((l) => v4.indexOf(l) < firstReject)).to.equal(true);
    expect(accepts).to.include.members([
      '-A OUTPUT -o lo -j ACCEPT',
      '-A OUTPUT -d 203.0.113.7 -p tcp --dport 8080 -j ACCEPT',
      '-A OUTPUT -d 10.0.0.53 -p udp --dport 53 -j ACCEPT',
      '-A OUTPUT -d 10.9.0.0/16 -j ACCEPT',
      '-A OUTPUT -d 192.168.1.5 -p tcp --dport 5432 -j ACCEPT',
    ]);
    expect(accepts.some((l) => l.includes('fd00::53'))).to.equal(false);
  });

  it("refuses this host's own addresses (TCP by a reset) and every range of the outbound address policy", () => {
    const v4 = rules(4);
    expect(v4).to.include('-A OUTPUT -d 198.51.100.4 -p tcp -j REJECT --reject-with tcp-reset');
    for (const cidr of firewallRanges(4))
      expect(v4).to.include(`-A OUTPUT -d ${cidr} -j REJECT --reject-with icmp-port-unreachable`);
    const v6 = rules(6);
    expect(v6).to.include('-A OUTPUT -d fe80::1 -p tcp -j REJECT --reject-with tcp-reset');
    for (const cidr of firewallRanges(6))
      expect(v6).to.include(`-A OUTPUT -d ${cidr} -j REJECT --reject-with icmp6-port-unreachable`);
    expect(v6).to.include('-A OUTPUT -d fd00::53 -p udp --dport 53 -j ACCEPT');
  });

  it('loads as written with iptables-restore, in a network namespace of its own', function () {
    if (process.geteuid?.() !== 0) this.skip();
    for (const family of [4, 6] as const) {
      const [restore, list] = family === 4 ? ['iptables-restore', 'iptables'] : ['ip6tables-restore', 'ip6tables'];
      const out = execFileSync('unshare', ['--net', '--', 'sh', '-c', `${restore} && ${list} -S OUTPUT`], {
        input: namespaceRules(plan, family),
        encoding: 'utf8',
      });
      const loaded = out.split('\n').filter((l) => l.startsWith('-A OUTPUT'));
      const written = namespaceRules(plan, family)
        .split('\n')
        .filter((l) => l.startsWith('-A OUTPUT'));
      expect(loaded.length).to.equal(written.length);
    }
  });
});

// The outbound address policy (src/security/outbound-policy.ts): every refused range in both families, v4
// addresses embedded in IPv6, this host's own interface addresses, CIDR and host:port allowances, the
// settings' parsing, the firewall's list, redirects to a refused address, and rebinding: a name that answers a
// public address first and 127.0.0.1 second is connected to at the address that was checked.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import {
  createOutboundPolicy,
  embeddedV4,
  firewallRanges,
  formatOutboundAllow,
  OutboundRefused,
  parseOutboundAllow,
  REFUSED_RANGES,
  type OutboundAllow,
  type Resolver,
} from '../../../src/security/outbound-policy';
import { safeFetch } from '../../../src/services/data-connectors/sources/safe-fetch';

const none: OutboundAllow = { cidrs: [], hostPorts: [] };
/** A host whose own (non-loopback) addresses are these, public ones included, as on a cloud VM. */
const HOST_ADDRESSES = ['127.0.0.1', '::1', '93.184.1.10', '2a00:1450::10', '10.0.0.5'];
const policyOf = (allow: OutboundAllow = none, resolver?: Resolver) =>
  createOutboundPolicy(allow, { hostAddresses: async () => HOST_ADDRESSES, ...(resolver ? { resolver } : {}) });

/** The policy's verdict on one address, after its first read of the host's addresses. */
async function refused(address: string, port = 443, allow: OutboundAllow = none): Promise<boolean> {
  const policy = policyOf(allow);
  return policy.resolve(address, port).then(
    () => false,
    (err: unknown) => {
      if (!(err instanceof OutboundRefused)) throw err;
      return true;
    },
  );
}

describe('outbound address policy', () => {
  it('refuses an address of every refused range, in both families', async () => {
    const samples: Record<string, string> = {
      '0.0.0.0/8': '0.0.0.0',
      '10.0.0.0/8': '10.255.255.1',
      '100.64.0.0/10': '100.100.100.200',
      '127.0.0.0/8': '127.0.0.2',
      '169.254.0.0/16': '169.254.169.254',
      '172.16.0.0/12': '172.31.0.1',
      '192.0.0.0/24': '192.0.0.192',
      '192.88.99.0/24': '192.88.99.1',
      '192.168.0.0/16': '192.168.1.1',
      '198.18.0.0/15': '198.19.255.255',
      '224.0.0.0/4': '239.255.255.250',
      '240.0.0.0/4': '255.255.255.255',
      '168.63.129.16/32': '168.63.129.16',
      '::/128': '::',
      '::1/128': '::1',
      '64:ff9b:1::/48': '64:ff9b:1::1',
      '100::/64': '100::1',
      '2001::/23': '2001:0:4136:e378::1',
      '5f00::/16': '5f00::1',
      'fc00::/7': 'fd00:ec2::254',
      'fe80::/10': 'fe80::1%eth0',
      'fec0::/10': 'fec0::1',
      'ff00::/8': 'ff02::1',
    };
    expect(Object.keys(samples).sort()).to.deep.equal([...REFUSED_RANGES[4], ...REFUSED_RANGES[6]].sort());
    for (const [range, address] of Object.entries(samples)) {
      expect(await refused(address), `${address} (${range})`).to.equal(true);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '[2a00:1450:4001::1]', '203.0.113.80']) {
      expect(await refused(address), address).to.equal(false);
    }
  });

  it('refuses refused v4 addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4, ISATAP), not public ones', async () => {
    for (const address of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::127.0.0.1',
      '::a9fe:a9fe',
      '64:ff9b::10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      '2a00:1450::5efe:10.1.2.3',
      '::ffff:93.184.1.10', // this host's own address, mapped
    ]) {
      expect(await refused(address), address).to.equal(true);
    }
    expect(embeddedV4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).to.include('192.0.2.45'); // Teredo's client
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1']) {
      expect(await refused(address), address).to.equal(false);
    }
  });

  it("refuses this host's own addresses, even inside an allowed CIDR; a host:port opens one port of one", async () => {
    expect(await refused('93.184.1.10')).to.equal(true);
    expect(await refused('2a00:1450::10')).to.equal(true);
    expect(await refused('93.184.1.11')).to.equal(false);
    // A broad allowance for an intranet does not open the host itself ...
    const intranet = { cidrs: ['10.0.0.0/8', '93.184.0.0/16'], hostPorts: [] };
    expect(await refused('10.0.0.5', 443, intranet)).to.equal(true);
    expect(await refused('10.0.0.6', 443, intranet)).to.equal(false);
    expect(await refused('93.184.1.10', 443, intranet)).to.equal(true);
    // ... a single-address CIDR or a host:port does.
    expect(await refused('10.0.0.5', 443, { cidrs: ['10.0.0.5/32'], hostPorts: [] })).to.equal(false);
    const onePort = { cidrs: [], hostPorts: [{ host: '10.0.0.5', port: 5432 }] };
    expect(await refused('10.0.0.5', 5432, onePort)).to.equal(false);
    expect(await refused('10.0.0.5', 5433, onePort)).to.equal(true);
  });

  it('reads the real host: every interface address, loopback and non-loopback, is refused', async () => {
    const policy = createOutboundPolicy(none);
    const os = await import('node:os');
    const addresses = Object.values(os.networkInterfaces()).flatMap((l) => (l ?? []).map((i) => i.address));
    expect(addresses.length).to.be.greaterThan(0);
    for (const address of addresses) {
      const err = await policy.resolve(address, 80).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, address).to.be.instanceOf(OutboundRefused);
    }
  });

  it('opens CIDRs and host:port pairs, by address and by name, and nothing else', async () => {
    const allow = parseOutboundAllow(
      '10.1.0.0/16, db.internal:5432,127.0.0.1:11434,[fd00::5]:5432,fd00:1::/64',
      'OUTBOUND_ALLOW',
      [],
    );
    expect(allow).to.deep.equal({
      cidrs: ['10.1.0.0/16', 'fd00:1::/64'],
      hostPorts: [
        { host: 'db.internal', port: 5432 },
        { host: '127.0.0.1', port: 11434 },
        { host: 'fd00::5', port: 5432 },
      ],
    });
    expect(formatOutboundAllow(allow)).to.equal(
      '10.1.0.0/16,fd00:1::/64,db.internal:5432,127.0.0.1:11434,[fd00::5]:5432',
    );
    const resolver: Resolver = async (host) =>
      host.toLowerCase().replace(/\.$/, '') === 'db.internal'
        ? [{ address: '10.9.9.9', family: 4 }]
        : [{ address: '10.9.9.10', family: 4 }];
    const policy = policyOf(allow, resolver);
    const verdict = (host: string, port: number) =>
      policy.resolve(host, port).then(
        (list) => list.map((a) => a.address).join(','),
        (e: Error) => e.constructor.name,
      );
    expect(await verdict('10.1.200.3', 80)).to.equal('10.1.200.3');
    expect(await verdict('10.2.0.1', 80)).to.equal('OutboundRefused');
    expect(await verdict('fd00:1::9', 80)).to.equal('fd00:1::9');
    expect(await verdict('db.internal', 5432)).to.equal('10.9.9.9');
    expect(await verdict('DB.Internal.', 5432)).to.equal('10.9.9.9');
    expect(await verdict('db.internal', 5433)).to.equal('OutboundRefused');
    expect(await verdict('other.internal', 5432)).to.equal('OutboundRefused'); // 10.9.9.10: not allowed by name
    expect(await verdict('127.0.0.1', 11434)).to.equal('127.0.0.1');
    expect(await verdict('127.0.0.1', 5432)).to.equal('OutboundRefused');
    expect(await verdict('[fd00::5]', 5432)).to.equal('fd00::5');
    expect(await verdict('fd00::5', 22)).to.equal('OutboundRefused');
  });

  it('answers one message for every refused address and port; the reason is logged only', async () => {
    const policy = policyOf();
    const messages = new Set<string>();
    for (const [address, port] of [
      ['127.0.0.1', 5432],
      ['127.0.0.1', 1],
      ['169.254.169.254', 80],
      ['93.184.1.10', 8080],
    ] as const) {
      const err = (await policy.resolve(address, port).catch((e: unknown) => e)) as OutboundRefused;
      expect(err).to.be.instanceOf(OutboundRefused);
      expect(err.reason).to.include(address);
      messages.add(err.message.replace(address, '<host>'));
    }
    expect(messages.size).to.equal(1);
    expect([...messages][0])
      .to.include('OUTBOUND_ALLOW')
      .and.not.match(/5432|8080|this host's own address/);
  });

  it('takes OUTBOUND_ALLOW, and DATA_CONNECTOR_ALLOW_CIDRS / _PRIVATE_NETWORKS as aliases', () => {
    const config = loadConfig({
      OUTBOUND_ALLOW: '10.0.0.0/8,localhost:5432',
      DATA_CONNECTOR_ALLOW_CIDRS: '192.168.0.0/16',
    });
    expect(config.outbound.cidrs).to.deep.equal(['10.0.0.0/8', '192.168.0.0/16']);
    expect(config.outbound.hostPorts).to.deep.equal([{ host: 'localhost', port: 5432 }]);
    expect(loadConfig({ DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS: 'true' }).outbound.cidrs).to.deep.equal([
      '0.0.0.0/0',
      '::/0',
    ]);
    for (const bad of ['10.0.0.0/33', 'db.internal', 'db.internal:0', 'a b:1', '[db]:1', 'http://x:1']) {
      expect(() => loadConfig({ OUTBOUND_ALLOW: bad }), bad).to.throw('OUTBOUND_ALLOW');
    }
  });

  it('gives the run firewall the same ranges, with their NAT64 and 6to4 forms', () => {
    expect(firewallRanges(4)).to.deep.equal([...REFUSED_RANGES[4]]);
    const v6 = firewallRanges(6);
    expect(v6).to.include.members([...REFUSED_RANGES[6], '64:ff9b::127.0.0.0/104', '2002:a9fe:0::/32']);
  });

  describe('connections', () => {
    let server: http.Server;
    let port: number;
    const hits: string[] = [];
    before(async () => {
      server = http.createServer((req, res) => {
        hits.push(req.url ?? '');
        if (req.url === '/hop') res.writeHead(302, { location: `http://169.254.169.254:${port}/latest/meta-data` });
        res.end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise((r) => server.close(r)));

    const fetchOptions = (allow: OutboundAllow, resolver?: Resolver) => ({
      config: loadConfig({ DATA_CONNECTOR_FETCH_TIMEOUT_SECONDS: '5' }).dataConnectors,
      policy: policyOf(allow, resolver),
      signal: new AbortController().signal,
      maxBytes: 1024,
    });

    it('checks every redirect hop: a hop to a refused address is refused, not followed', async () => {
      const opts = fetchOptions({ cidrs: [], hostPorts: [{ host: '127.0.0.1', port }] });
      expect((await safeFetch(`http://127.0.0.1:${port}/page`, opts)).body.toString()).to.equal('ok');
      const err = await safeFetch(`http://127.0.0.1:${port}/hop`, opts).catch((e: { type: string }) => e);
      expect((err as { type: string }).type).to.equal('AddressRefused');
      expect(hits).to.deep.equal(['/page', '/hop']);
    });

    it('connects to the address it checked: a name answering a public address, then 127.0.0.1, is not rebound', async () => {
      // The first answer is a public address (checked, allowed); a rebinding resolver answers loopback after.
      // The connection must go to the checked public address (here unroutable: it times out or fails) and
      // never reach the loopback listener.
      let answers = 0;
      const rebinding: Resolver = async () =>
        answers++ === 0 ? [{ address: '198.51.100.1', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
      // The first answer is a public address (documentation space is not refused); the second is loopback.
      const opts = fetchOptions({ cidrs: ['198.51.100.0/24'], hostPorts: [] }, rebinding);
      const before = hits.length;
      const connected: string[] = [];
      const lookup = opts.policy.lookup(port);
      const spy: typeof lookup = (hostname, options, callback) =>
        lookup(hostname, options, ((err: Error | null, address: unknown, family?: number) => {
          connected.push(JSON.stringify(address));
          (callback as (e: Error | null, a: unknown, f?: number) => void)(err, address, family);
        }) as typeof callback);
      opts.policy = { ...opts.policy, lookup: () => spy };
      opts.config = { ...opts.config, fetchTimeoutSeconds: 1 };
      const err = await safeFetch(`http://rebind.example:${port}/rebound`, opts).catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
      expect(answers).to.equal(1); // resolved once
      expect(connected.join()).to.include('198.51.100.1').and.not.include('127.0.0.1');
      expect(hits.length).to.equal(before); // the loopback listener saw nothing
      // The same resolver's second answer (loopback), if asked again, is refused.
      expect(await opts.policy.resolve('rebind.example', port).catch((e: unknown) => e)).to.be.instanceOf(
        OutboundRefused,
      );
    });
  });
});

// The one outbound address policy: where the platform may connect on a tenant's behalf (data connector
// fetches, objstore endpoints, pg_vector databases, git remotes), and the refused ranges the run firewall
// writes (src/runtime/sandbox/firewall.ts). A host is resolved once; every address it resolves to is checked;
// the connection then goes to a checked address (a `lookup` hook, or the address itself), so a second DNS
// answer cannot move it (rebinding). Refused: this host's own addresses (every interface, refreshed, and what
// its host name resolves to), loopback, private, CGNAT, link-local (cloud metadata), reserved, multicast,
// benchmarking ranges of both families, and v4 addresses of those ranges embedded in IPv6
// (mapped, compatible, NAT64, 6to4, Teredo, ISATAP). Operators open exceptions with OUTBOUND_ALLOW: CIDRs
// (which never open this host's own non-loopback addresses, except a single-address CIDR) and host:port pairs.
// A refusal reads the same whatever the port or the service behind it (OutboundRefused); the reason goes to
// the process's log only.
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import { createLogger, type Logger } from '../logger';

/**
 * IANA special-purpose ranges (RFC 6890 and successors) and cloud metadata addresses. Not the documentation
 * ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20): nothing of a host or its network
 * lives there by definition, so refusing them protects nothing, and some networks put their package mirrors
 * there (builds must reach PyPI and npm through the run firewall, which writes this same list).
 */
export const REFUSED_RANGES: Readonly<Record<4 | 6, readonly string[]>> = {
  4: [
    '0.0.0.0/8', // this network (0.0.0.0 reaches the host)
    '10.0.0.0/8', // private
    '100.64.0.0/10', // CGNAT (Alibaba's metadata 100.100.100.200)
    '127.0.0.0/8', // loopback
    '169.254.0.0/16', // link-local (metadata 169.254.169.254)
    '172.16.0.0/12', // private
    '192.0.0.0/24', // IETF protocol assignments (Oracle's metadata 192.0.0.192)
    '192.88.99.0/24', // 6to4 relay anycast
    '192.168.0.0/16', // private
    '198.18.0.0/15', // benchmarking
    '224.0.0.0/4', // multicast
    '240.0.0.0/4', // reserved and broadcast
    '168.63.129.16/32', // Azure's platform endpoint (wire server, metadata)
  ],
  6: [
    '::/128', // unspecified
    '::1/128', // loopback
    '64:ff9b:1::/48', // local-use NAT64
    '100::/64', // discard-only
    '2001::/23', // IETF protocol assignments (Teredo, benchmarking, ORCHID)
    '5f00::/16', // segment routing
    'fc00::/7', // unique local (AWS metadata fd00:ec2::254)
    'fe80::/10', // link-local
    'fec0::/10', // site-local
    'ff00::/8', // multicast
  ],
};

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/** How an IPv6 prefix carries a v4 address: a /96 prefix, or 6to4's 2002:<v4>::/48. */
const NAT64 = '64:ff9b::';

/**
 * The refused ranges as a packet filter writes them. IPv6 adds the refused v4 ranges as NAT64 and 6to4 forms
 * (what a v6 packet can carry on the wire; a mapped address leaves the socket as IPv4).
 */
export function firewallRanges(family: 4 | 6): string[] {
  if (family === 4) return [...REFUSED_RANGES[4]];
  const embedded = REFUSED_RANGES[4].flatMap((cidr) => {
    const [v4, bits] = cidr.split('/');
    const [a, b, c, d] = v4.split('.').map(Number);
    const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
    return [`${NAT64}${v4}/${96 + Number(bits)}`, `2002:${hex(a, b)}:${hex(c, d)}::/${16 + Number(bits)}`];
  });
  return [...REFUSED_RANGES[6], ...embedded];
}

export interface HostPort {
  /** A lower-case host name, or an IP address (canonical, without brackets). */
  host: string;
  port: number;
}

/** What OUTBOUND_ALLOW (and its aliases) open. */
export interface OutboundAllow {
  cidrs: string[];
  hostPorts: HostPort[];
}

/**
 * `10.0.0.0/8,db.internal:5432,127.0.0.1:11434,[fd00::5]:5432`: CIDRs and host:port pairs. Problems are
 * pushed with `setting` named.
 */
export function parseOutboundAllow(raw: string, setting: string, problems: string[]): OutboundAllow {
  const allow: OutboundAllow = { cidrs: [], hostPorts: [] };
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const cidr = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      const family = net.isIP(cidr[1]);
      if (family && Number(cidr[2]) <= (family === 4 ? 32 : 128)) {
        allow.cidrs.push(entry);
        continue;
      }
    }
    const hostPort = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
    const port = Number(hostPort?.[3]);
    const host = hostPort?.[1] ?? hostPort?.[2];
    if (host && port >= 1 && port <= 65535 && (hostPort![1] === undefined || net.isIPv6(host))) {
      allow.hostPorts.push({ host: canonical(host) ?? host.toLowerCase().replace(/\.$/, ''), port });
      continue;
    }
    problems.push(
      `${setting} entries must be CIDRs (10.0.0.0/8) or host:port (db.internal:5432, [fd00::5]:5432), got ${JSON.stringify(entry)}`,
    );
  }
  return allow;
}

/** The OUTBOUND_ALLOW value of `allow` (for a child process with the same policy). */
export const formatOutboundAllow = (allow: OutboundAllow) =>
  [...allow.cidrs, ...allow.hostPorts.map((hp) => `${net.isIPv6(hp.host) ? `[${hp.host}]` : hp.host}:${hp.port}`)].join(
    ',',
  );

/** The address without brackets or zone, IPv6 in its canonical compressed form; undefined when not an IP. */
export function canonical(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 4) return bare;
  if (family !== 6) return undefined;
  return new URL(`http://[${bare}]/`).hostname.replace(/^\[|\]$/g, '');
}

/** The eight 16-bit groups of a canonical IPv6 address. */
function groupsOf(v6: string): number[] {
  const [head, tail] = v6.includes('::') ? v6.split('::') : [v6, undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = part(head);
  const t = part(tail);
  return tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The v4 addresses an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo, ISATAP). */
export function embeddedV4(address: string): string[] {
  if (net.isIP(address) !== 6) return [];
  const g = groupsOf(address);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const found: string[] = [];
  if (zero(0, 5) && (g[5] === 0xffff || g[5] === 0)) found.push(v4Of(g[6], g[7])); // mapped, compatible
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) found.push(v4Of(g[6], g[7])); // NAT64
  if (g[0] === 0x2002) found.push(v4Of(g[1], g[2])); // 6to4
  if (g[0] === 0x2001 && g[1] === 0) found.push(v4Of(g[2], g[3]), v4Of(g[6] ^ 0xffff, g[7] ^ 0xffff)); // Teredo
  if ((g[4] & 0xfdff) === 0 && g[5] === 0x5efe) found.push(v4Of(g[6], g[7])); // ISATAP
  return found;
}

function blockList(cidrs: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const c of cidrs) {
    const [addr, bits] = c.split('/');
    list.addSubnet(addr, Number(bits), net.isIPv6(addr) ? 'ipv6' : 'ipv4');
  }
  return list;
}

const familyOf = (address: string) => (net.isIPv6(address) ? 'ipv6' : 'ipv4');
const inList = (list: net.BlockList, address: string) => list.check(address, familyOf(address));

/** A refusal, as every caller answers it: the same words for every address, port and service. */
export class OutboundRefused extends Error {
  readonly type = 'AddressRefused';
  constructor(
    target: string,
    /** Why, for the log only. */
    readonly reason: string,
  ) {
    super(refusedMessage(target));
  }
}

export const refusedMessage = (target: string) =>
  `${target} is not an address this platform connects to on a tenant's behalf (its own addresses, loopback, ` +
  'private, link-local, reserved and metadata ranges are refused); an operator can allow a range or a ' +
  'host:port with OUTBOUND_ALLOW';

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'ssh:': 22, 'git:': 9418 };

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export interface OutboundPolicyOptions {
  /** How names are resolved (tests inject answers; default: the system resolver, like every other lookup). */
  resolver?: Resolver;
  /** This host's own addresses (default: every interface, and what the host name resolves to). */
  hostAddresses?: () => Promise<string[]>;
  /** How long the host's addresses are kept before they are read again. */
  refreshMs?: number;
  log?: Logger;
}

export interface OutboundPolicy {
  /** Why `address` (reached as `name`, at `port`) is refused, for the log; undefined when it is allowed. */
  check(address: string, port: number, name?: string): string | undefined;
  /** Resolves `host` once and checks every address; answers them (throws OutboundRefused when one is refused). */
  resolve(host: string, port: number): Promise<Array<{ address: string; family: number }>>;
  /** A lookup hook for node:net/http/tls connections to `port`: answers checked addresses only. */
  lookup(port: number): net.LookupFunction;
  /**
   * Checks the host of a URL that another program connects to by itself (git): every address it resolves to.
   * `file:` URLs name no host. (The program resolves again: this suits operator-named hosts, such as
   * CODEHOST_BASE_URL, whose DNS a tenant does not control.)
   */
  checkUrl(href: string): Promise<void>;
  /** Logs why a connection on a tenant's behalf failed (the tenant reads only the generic error). */
  logFailure(target: string, reason: string): void;
}

/** Every address of this host: all interfaces and its host name's addresses. */
export async function thisHostsAddresses(): Promise<string[]> {
  const interfaces = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  const named = await dns.promises
    .lookup(os.hostname(), { all: true })
    .then((list) => list.map((a) => a.address))
    .catch(() => []);
  return [...interfaces, ...named];
}

export function createOutboundPolicy(allow: OutboundAllow, opts: OutboundPolicyOptions = {}): OutboundPolicy {
  const resolver = opts.resolver ?? systemResolver;
  const readHostAddresses = opts.hostAddresses ?? thisHostsAddresses;
  const refreshMs = opts.refreshMs ?? 30_000;
  const refused = blockList([...REFUSED_RANGES[4], ...REFUSED_RANGES[6]]);
  const loopback = blockList(LOOPBACK);
  const allowed = blockList(allow.cidrs);
  // A CIDR opens this host's own (non-loopback) address only when it names that one address.
  const allowedExactly = blockList(allow.cidrs.filter((c) => /\/(32|128)$/.test(c)));
  const hostPorts = new Set(allow.hostPorts.map((hp) => `${hp.host}|${hp.port}`));

  let own = new net.BlockList();
  let readAt = -Infinity;
  let reading: Promise<void> | undefined;
  /** This host's addresses, read again when older than refreshMs (callers wait for the first read only). */
  const refresh = () => {
    if (Date.now() - readAt < refreshMs || reading) return reading ?? Promise.resolve();
    reading = readHostAddresses()
      .then((addresses) => {
        const list = new net.BlockList();
        for (const a of addresses.map(canonical)) if (a && !inList(loopback, a)) list.addAddress(a, familyOf(a));
        own = list;
        readAt = Date.now();
      })
      .catch(() => undefined)
      .finally(() => (reading = undefined));
    return reading;
  };

  const check = (raw: string, port: number, name?: string): string | undefined => {
    void refresh();
    const address = canonical(raw);
    if (!address) return `${raw} is not an IP address`;
    const host = name?.toLowerCase().replace(/\.$/, '');
    if (hostPorts.has(`${address}|${port}`) || (host && hostPorts.has(`${host}|${port}`))) return undefined;
    const forms = [address, ...embeddedV4(address)];
    for (const f of forms) {
      if (inList(own, f) && !inList(allowedExactly, f)) return `${raw} is an address of this host`;
    }
    for (const f of forms) {
      if (inList(refused, f) && !inList(allowed, f))
        return `${raw}${f === address ? '' : ` (carrying ${f})`} is in a refused range`;
    }
    return undefined;
  };

  const log = opts.log;
  const policy: OutboundPolicy = {
    check,
    logFailure: (target, reason) => log?.warn({ target, reason }, 'outbound connection refused or failed'),
    async resolve(rawHost, port) {
      await refresh();
      const host = rawHost.replace(/^\[|\]$/g, '');
      const literal = canonical(host);
      const addresses = literal ? [{ address: literal, family: net.isIP(literal) }] : await resolver(host);
      if (!addresses.length) throw new Error(`${host} has no address`);
      for (const a of addresses) {
        const why = check(a.address, port, literal ? undefined : host);
        if (why) {
          policy.logFailure(`${host} port ${port}`, why);
          throw new OutboundRefused(host, why);
        }
      }
      return addresses;
    },
    async checkUrl(href) {
      const url = new URL(href);
      if (url.protocol === 'file:') return;
      const port = Number(url.port) || DEFAULT_PORTS[url.protocol];
      if (!url.hostname || !port) throw new OutboundRefused(href, `${url.protocol} URLs are not checked`);
      await policy.resolve(url.hostname, port);
    },
    lookup: (port) => (hostname, options, callback) => {
      policy.resolve(hostname, port).then(
        (list) => {
          if ((options as { all?: boolean }).all)
            return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(
              null,
              list as dns.LookupAddress[],
            );
          callback(null, list[0].address, list[0].family);
        },
        (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
      );
    },
  };
  return policy;
}

const policies = new WeakMap<OutboundAllow, OutboundPolicy>();

/** The process's policy for this configuration (one per configuration, so the host's addresses are read once). */
export function outboundPolicyFor(config: { outbound: OutboundAllow; logLevel: string }): OutboundPolicy {
  let policy = policies.get(config.outbound);
  if (!policy) {
    policy = createOutboundPolicy(config.outbound, { log: createLogger(config.logLevel, 'outbound') });
    policies.set(config.outbound, policy);
  }
  return policy;
}

// Outside HTTP(S) fetches of data connectors, safe against server-side request forgery: the host is resolved
// once, every address checked (loopback, private, link-local, CGNAT, multicast, reserved and IPv4-mapped
// forms of them are refused unless DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS or DATA_CONNECTOR_ALLOW_CIDRS allow
// them), and the connection goes to the checked address (the lookup hook of node:http), so a DNS answer
// cannot change in between. Redirects are followed by hand, each hop checked again, up to the limit. Bodies
// are read up to a cap, with a per-request timeout and the job's abort signal.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { DataConnectorsConfig } from '../../../config';

export class FetchError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const REFUSED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const REFUSED_V6 = ['::/128', '::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8', '64:ff9b::/96', '2001:db8::/32'];

function blockList(cidrs: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const c of cidrs) {
    const [addr, bits] = c.split('/');
    list.addSubnet(addr, Number(bits), net.isIPv6(addr) ? 'ipv6' : 'ipv4');
  }
  return list;
}

const refused = blockList([...REFUSED_V4, ...REFUSED_V6]);

/** The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:127.0.0.1`), else the address itself. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1], family: 'ipv4' };
  return { address, family: net.isIPv6(address) ? 'ipv6' : 'ipv4' };
}

export interface AddressPolicy {
  /** Why `address` may not be fetched, or undefined when it may. */
  check(address: string): string | undefined;
}

export function addressPolicy(
  config: Pick<DataConnectorsConfig, 'allowPrivateNetworks' | 'allowCidrs'>,
): AddressPolicy {
  const allowed = blockList(config.allowCidrs);
  return {
    check(raw) {
      if (config.allowPrivateNetworks) return undefined;
      const { address, family } = unmapped(raw);
      if (!refused.check(address, family) || allowed.check(address, family)) return undefined;
      return (
        `${raw} is a loopback, private, link-local or reserved address: refused (SSRF). An operator can allow it ` +
        'with DATA_CONNECTOR_ALLOW_CIDRS (e.g. 10.0.0.0/8) or DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS=true'
      );
    },
  };
}

export interface FetchOptions {
  config: DataConnectorsConfig;
  policy: AddressPolicy;
  signal: AbortSignal;
  maxBytes: number;
}

export interface FetchedPage {
  /** The URL after redirects. */
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A lookup for node:http that answers only checked addresses (the connection then uses the one answered). */
function checkedLookup(policy: AddressPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as dns.LookupAddress[];
      for (const a of list) {
        const why = policy.check(a.address);
        if (why) return callback(new FetchError('AddressRefused', `${hostname} resolves to ${why}`), '', 4);
      }
      const first = list[0];
      if (!first) return callback(new FetchError('FetchFailed', `${hostname} has no address`), '', 4);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      return callback(null, first.address, first.family);
    });
  };
}

function requestOnce(url: URL, opts: FetchOptions): Promise<FetchedPage> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const why = opts.policy.check(host);
      if (why) return reject(new FetchError('AddressRefused', why));
    }
    const timeout = AbortSignal.timeout(opts.config.fetchTimeoutSeconds * 1000);
    const signal = AbortSignal.any([opts.signal, timeout]);
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(
      url,
      {
        method: 'GET',
        lookup: checkedLookup(opts.policy),
        signal,
        headers: {
          'user-agent': opts.config.userAgent,
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
          'accept-encoding': 'identity',
        },
      },
      (res) => {
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > opts.maxBytes) {
          res.destroy();
          return reject(
            new FetchError('TooLarge', `${url.href} is ${declared} bytes, more than the cap of ${opts.maxBytes}`),
          );
        }
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) {
            res.destroy();
            reject(
              new FetchError(
                'TooLarge',
                `${url.href} is larger than the cap of ${opts.maxBytes} bytes (read no further)`,
              ),
            );
            return;
          }
          parts.push(chunk);
        });
        res.on('end', () =>
          resolve({ url: url.href, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      if (err instanceof FetchError) return reject(err);
      if (opts.signal.aborted) return reject(opts.signal.reason ?? err);
      if (timeout.aborted)
        return reject(
          new FetchError('Timeout', `${url.href} did not answer within ${opts.config.fetchTimeoutSeconds} s`),
        );
      reject(new FetchError('FetchFailed', `${url.href}: ${(err as Error).message}`));
    });
    req.end();
  });
}

/** GET `href`, following redirects (each hop checked) up to DATA_CONNECTOR_MAX_REDIRECTS. */
export async function safeFetch(href: string, opts: FetchOptions): Promise<FetchedPage> {
  let url = new URL(href);
  for (let hop = 0; ; hop++) {
    if (!['http:', 'https:'].includes(url.protocol))
      throw new FetchError('FetchFailed', `${url.href}: only http and https are fetched`);
    const page = await requestOnce(url, opts);
    const location = page.headers.location;
    if (page.status >= 300 && page.status < 400 && location) {
      if (hop >= opts.config.maxRedirects)
        throw new FetchError('TooManyRedirects', `${href} redirects more than ${opts.config.maxRedirects} times`);
      url = new URL(location, url);
      continue;
    }
    return page;
  }
}

// Outside HTTP(S) fetches of data connectors, safe against server-side request forgery: every hop goes
// through the outbound address policy (src/security/outbound-policy.ts): the host is resolved once, every
// address checked, and the connection goes to the checked address (the lookup hook of node:http), so a DNS
// answer cannot change in between. Redirects are followed by hand, each hop checked again, up to the limit.
// Bodies are read up to a cap, with a per-request timeout and the job's abort signal.
import http from 'node:http';
import https from 'node:https';
import type { DataConnectorsConfig } from '../../../config';
import { canonical, OutboundRefused, type OutboundPolicy } from '../../../security/outbound-policy';

export class FetchError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export interface FetchOptions {
  config: DataConnectorsConfig;
  policy: OutboundPolicy;
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

const portOf = (url: URL) => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

async function requestOnce(url: URL, opts: FetchOptions): Promise<FetchedPage> {
  // An address in the URL is connected to without a lookup: checked here; a name is checked by the lookup hook.
  if (canonical(url.hostname)) {
    await opts.policy.resolve(url.hostname, portOf(url)).catch((err: unknown) => {
      throw err instanceof OutboundRefused ? new FetchError(err.type, err.message) : err;
    });
  }
  return new Promise((resolve, reject) => {
    const timeout = AbortSignal.timeout(opts.config.fetchTimeoutSeconds * 1000);
    const signal = AbortSignal.any([opts.signal, timeout]);
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(
      url,
      {
        method: 'GET',
        lookup: opts.policy.lookup(portOf(url)),
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
      if (err instanceof OutboundRefused) return reject(new FetchError(err.type, err.message));
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

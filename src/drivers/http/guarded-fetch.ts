// The fetch the platform reaches a tenant's HTTP server with (an MCP server, an approval webhook): every
// connection goes through the one outbound address policy (src/security/outbound-policy.ts): a host name is
// resolved once and the socket goes to a checked address (undici's connect lookup), an address in the URL is checked before the request, and redirects are never
// followed (a redirect could aim anywhere). Each response body is counted as it is read and cut past `maxBytes`.
import { Agent, fetch as undiciFetch } from 'undici';
import { canonical, type OutboundPolicy } from '../../security/outbound-policy';

export class ResponseTooLarge extends Error {
  readonly type = 'ResponseTooLarge';
}

/** A fetch bound to `url`'s origin: one connection pool per client, closed by `close()`. */
export function guardedFetch(
  serverUrl: URL,
  opts: { policy: OutboundPolicy; maxBytes: number },
): { fetch: (url: string | URL, init?: RequestInit) => Promise<Response>; close: () => Promise<void> } {
  const port = Number(serverUrl.port) || (serverUrl.protocol === 'https:' ? 443 : 80);
  const agent = new Agent({ connect: { lookup: opts.policy.lookup(port) } });
  const fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const target = new URL(url);
    // The transport only ever asks its own server; anything else is refused rather than resolved.
    if (target.origin !== serverUrl.origin) throw new Error(`${target.origin} is not the MCP server's origin`);
    if (canonical(target.hostname)) await opts.policy.resolve(target.hostname, port);
    const response = (await undiciFetch(target, {
      ...(init as object),
      redirect: 'error',
      dispatcher: agent,
    })) as unknown as Response;
    return capped(response, opts.maxBytes);
  };
  return { fetch, close: () => agent.close() };
}

/** The response with its body cut (an error in its stream) once more than `maxBytes` were read. */
function capped(response: Response, maxBytes: number): Response {
  if (!response.body || [101, 204, 205, 304].includes(response.status)) return response;
  let read = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      read += chunk.byteLength;
      if (read > maxBytes)
        controller.error(new ResponseTooLarge(`The MCP server's response is larger than ${maxBytes} bytes`));
      else controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(counter), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

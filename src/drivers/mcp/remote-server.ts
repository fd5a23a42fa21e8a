// A tenant's remote MCP server (a tool of `mcp` code), reached with the official SDK's client over Streamable
// HTTP through the outbound policy (./guarded-fetch.ts). One connection per use: connect, list or call, close.
// What a server answers is hostile input: its listing is bounded (MAX_LISTED_TOOLS, names and descriptions cut),
// every response body is capped as it is read, and each request has a timeout and the caller's abort signal.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OutboundPolicy } from '../../security/outbound-policy';
import { guardedFetch } from '../http/guarded-fetch';

/** Tools read from one server at most; pages of its listing followed at most. */
export const MAX_LISTED_TOOLS = 200;
const MAX_LIST_PAGES = 20;
/** How long connecting and each listing request may take. */
export const MCP_LIST_TIMEOUT_MS = 30_000;

export interface McpServerTarget {
  url: string;
  /** Sent with every request (secret refs already resolved). */
  headers: Record<string, string>;
}

export interface McpConnectOptions {
  policy: OutboundPolicy;
  signal: AbortSignal;
  /** Cap of each response body, counted as it is read. */
  maxResponseBytes: number;
}

export interface ListedTool {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

export interface McpListing {
  server: { name: string; version: string };
  tools: ListedTool[];
}

export type McpCallResult = { isError: boolean; text: string };

const CLIENT_INFO = { name: 'tarmac', version: '1.0.0' };

async function withClient<T>(target: McpServerTarget, opts: McpConnectOptions, use: (c: Client) => Promise<T>) {
  const url = new URL(target.url);
  const http = guardedFetch(url, { policy: opts.policy, maxBytes: opts.maxResponseBytes });
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: http.fetch,
    requestInit: { headers: target.headers },
    // No reconnection loop of the server-to-client stream: a use lasts one request.
    reconnectionOptions: {
      maxReconnectionDelay: 1000,
      initialReconnectionDelay: 1000,
      reconnectionDelayGrowFactor: 1,
      maxRetries: 0,
    },
  });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await client.connect(transport, { signal: opts.signal, timeout: MCP_LIST_TIMEOUT_MS });
    return await use(client);
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
    await http.close().catch(() => undefined);
  }
}

const cut = (s: unknown, max: number) => (typeof s === 'string' ? s.slice(0, max) : '');

/** The server's name and its tools (their input schemas), up to MAX_LISTED_TOOLS. */
export function listMcpTools(target: McpServerTarget, opts: McpConnectOptions): Promise<McpListing> {
  return withClient(target, opts, async (client) => {
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES && tools.length < MAX_LISTED_TOOLS; page++) {
      const listed = await client.listTools(cursor ? { cursor } : {}, {
        signal: opts.signal,
        timeout: MCP_LIST_TIMEOUT_MS,
      });
      for (const t of listed.tools.slice(0, MAX_LISTED_TOOLS - tools.length)) {
        tools.push({
          name: cut(t.name, 128),
          description: cut(t.description ?? t.title, 2000),
          schema: (t.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object' },
        });
      }
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    const info = client.getServerVersion();
    return { server: { name: cut(info?.name, 200), version: cut(info?.version, 100) }, tools };
  });
}

/** What a tool result's content says, as text: text items joined; structured content as JSON when no text came. */
function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const items = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = items.map((item) => {
    if (item.type === 'text' && typeof item.text === 'string') return item.text;
    if (item.type === 'resource' && item.resource && typeof item.resource === 'object') {
      const r = item.resource as { uri?: string; text?: string };
      return r.text ?? `[resource ${r.uri ?? ''}]`;
    }
    if (item.type === 'resource_link') return `[resource ${String(item.uri ?? '')}]`;
    return `[${String(item.type ?? 'content')} ${String(item.mimeType ?? '')}]`.replace(' ]', ']');
  });
  if (!parts.length && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

/** Calls tool `name` once with `args`; `timeoutMs` bounds the call. */
export function callMcpTool(
  target: McpServerTarget,
  opts: McpConnectOptions & { timeoutMs: number },
  name: string,
  args: Record<string, unknown>,
): Promise<McpCallResult> {
  return withClient(target, opts, async (client) => {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      signal: opts.signal,
      timeout: opts.timeoutMs,
      maxTotalTimeout: opts.timeoutMs,
    });
    const answered = result as { isError?: unknown; content?: unknown; structuredContent?: unknown };
    return { isError: answered.isError === true, text: resultText(answered) };
  });
}

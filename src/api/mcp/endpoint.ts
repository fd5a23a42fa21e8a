// The MCP server at /mcp (docs/mcp.md): Streamable HTTP through the official SDK, one MCP session per client,
// kept by the api process that answered its `initialize` (another process answers 404 for it, and the client
// initializes again). Every request is authenticated by an API key (`Authorization: Bearer`), rate-limited as
// the API is, and acts in the key's organization with its role, as of that request. A session's tools are the
// organization's resources (catalog.ts; a tool's activities once it is described, which a listing starts); the
// list is looked at every few seconds and a change is announced (notifications/tools/list_changed). A session whose key is deleted or deactivated ends.
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps';
import type { Caller } from '../../services/caller';
import { authenticate, extractKey } from '../http/auth';
import { atLeast } from '../../services/accounts/roles';
import { describeTool } from '../../services/code/runs/tool-runs';
import { callTool, toolError } from './calls';
import { catalogOf } from './catalog';

export const MCP_PATH = '/mcp';
/** How often a session's tool list and key are looked at. */
const WATCH_MS = 5_000;
/** A session no request used for this long ends. */
const IDLE_MS = 30 * 60_000;
/** A tool whose describe run was started (or failed) is not described again before this. */
const DESCRIBE_AGAIN_MS = 5 * 60_000;

interface McpSession {
  caller: Caller;
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

/** A JSON-RPC error answered over plain HTTP (no session to answer in). */
function rpcError(ctx: Koa.Context, status: number, message: string, code = -32000) {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

/**
 * The catalog, and a describe run started (in the background, by a member) for each deployed tool without a
 * description: its activities are listed once it ends, announced by the next look.
 */
async function catalogFor(deps: Deps, caller: Caller, describing: Map<string, number>) {
  const { tools, undescribed } = await catalogOf(deps.ds, caller);
  if (atLeast(caller.role, 'member')) {
    for (const toolId of undescribed) {
      if (Date.now() - (describing.get(toolId) ?? 0) < DESCRIBE_AGAIN_MS) continue;
      describing.set(toolId, Date.now());
      describeTool(deps, caller, toolId).catch((err: unknown) =>
        deps.log.warn({ err, toolId }, 'an MCP session could not describe a tool'),
      );
    }
  }
  return tools;
}

function newSession(
  deps: Deps,
  caller: Caller,
  sessions: Map<string, McpSession>,
  describing: Map<string, number>,
): McpSession {
  const server = new Server({ name: 'tarmac', version: '0.1.0' }, { capabilities: { tools: { listChanged: true } } });
  let listed = '';
  let watch: NodeJS.Timeout | undefined;
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      sessions.set(id, session);
      watch = setInterval(() => void look(id), WATCH_MS);
      watch.unref();
    },
  });
  const session: McpSession = { caller, transport, server, lastSeen: Date.now() };
  const end = async (id: string) => {
    clearInterval(watch);
    sessions.delete(id);
    await transport.close().catch(() => undefined);
  };
  // The key still works, the session is in use, and the list is what the client last saw (else it is told).
  const look = async (id: string) => {
    try {
      const [key]: Array<{ active: boolean }> = await deps.ds.query(
        `SELECT active FROM api_keys WHERE api_key_id = $1`,
        [session.caller.apiKeyId],
      );
      if (!key?.active || Date.now() - session.lastSeen > IDLE_MS) return void (await end(id));
      const names = (await catalogFor(deps, session.caller, describing)).map((t) => t.name).join('\n');
      if (listed && names !== listed) await server.sendToolListChanged();
      listed = names;
    } catch (err) {
      deps.log.warn({ err }, 'an MCP session could not look at its tools');
    }
  };
  transport.onclose = () => {
    clearInterval(watch);
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools = await catalogFor(deps, session.caller, describing);
    listed = tools.map((t) => t.name).join('\n');
    return { tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = (await catalogOf(deps.ds, session.caller)).tools.find((t) => t.name === request.params.name);
    if (!tool) return toolError(`Unknown tool ${request.params.name}: list the tools again (tools/list)`);
    const token = request.params._meta?.progressToken;
    return callTool(deps, session.caller, tool, request.params.arguments ?? {}, {
      signal: extra.signal,
      idempotencyKey: request.params._meta?.idempotency_key as string | undefined,
      progress:
        token === undefined
          ? undefined
          : (progress, message) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken: token, progress, message },
              }),
    });
  });
  void server.connect(transport);
  return session;
}

/** Koa middleware answering /mcp; every other path goes on. */
export function mcpEndpoint(deps: Deps): Koa.Middleware {
  const sessions = new Map<string, McpSession>();
  const describing = new Map<string, number>();
  return async (ctx, next) => {
    if (ctx.path !== MCP_PATH) return next();
    const sessionId = ctx.get('mcp-session-id') || undefined;
    let caller: Caller;
    try {
      const key = extractKey(ctx.get('authorization') || undefined, undefined, false);
      caller = await authenticate(deps.ds, key, deps.keyCache);
    } catch (err) {
      // A key deleted or deactivated ends its session.
      const session = sessionId ? sessions.get(sessionId) : undefined;
      if (session) await session.transport.close().catch(() => undefined);
      throw err;
    }
    await deps.rateLimiter?.admit(ctx, caller, false);

    let session = sessionId ? sessions.get(sessionId) : undefined;
    // Another key's session is as unknown as an ended one.
    if (sessionId && (!session || session.caller.apiKeyId !== caller.apiKeyId))
      return rpcError(ctx, 404, 'Session not found: initialize again', -32001);
    let body: unknown;
    if (ctx.method === 'POST') {
      try {
        body = JSON.parse(await getRawBody(ctx.req, { limit: deps.config.maxJsonBodyBytes, encoding: 'utf8' }));
      } catch (err) {
        const tooLarge = (err as { type?: string }).type === 'entity.too.large';
        return rpcError(ctx, tooLarge ? 413 : 400, 'Parse error: the body is not JSON within the size limit', -32700);
      }
    }
    if (!session) {
      if (ctx.method !== 'POST' || !isInitializeRequest(body))
        return rpcError(ctx, 400, 'No session: send an initialize request first (without Mcp-Session-Id)');
      session = newSession(deps, caller, sessions, describing);
    }
    session.caller = caller; // its role as of this request
    session.lastSeen = Date.now();
    ctx.status = 200; // the transport answers on the raw response
    ctx.respond = false;
    await session.transport.handleRequest(ctx.req, ctx.res, body);
  };
}

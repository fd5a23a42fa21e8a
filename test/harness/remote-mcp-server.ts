// A small remote MCP server (an outside provider: a team's own server) for the tests of tools of `mcp` code,
// built with the official SDK: Streamable HTTP, stateless, on OUTSIDE_HOST (the one range the stack allows).
// Its tools: add, whoami (the Authorization header it was sent), fail (a tool error), huge (a result past any
// cap) and slow (waits, for timeouts and cancels). It counts the calls of each tool, and what each was sent.
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { OUTSIDE_HOST } from './stack';

export interface RemoteMcpServer {
  url: string;
  /** Calls by tool name, with their arguments and Authorization header, in order. */
  calls: Array<{ name: string; args: Record<string, unknown>; authorization?: string }>;
  /** Slow calls whose client went away (cancelled) before the answer. */
  cancelled: number;
  close(): Promise<void>;
}

const TOOLS = [
  {
    name: 'add',
    description: 'Adds a and b.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  { name: 'whoami', description: 'Says which Authorization header it was sent.', inputSchema: { type: 'object' } },
  { name: 'fail', description: 'Always fails.', inputSchema: { type: 'object' } },
  { name: 'huge', description: 'Answers 3 MB of text.', inputSchema: { type: 'object' } },
  {
    name: 'slow',
    description: 'Answers after `seconds`.',
    inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } },
  },
];

export async function startRemoteMcpServer(): Promise<RemoteMcpServer> {
  const state: RemoteMcpServer = { url: '', calls: [], cancelled: 0, close: async () => undefined };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const authorization = req.headers.authorization;
    // The client's cancel: its notifications/cancelled reaches another (stateless) server, so the request's own
    // connection closing unanswered is what stops the work.
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const server = new Server({ name: 'test-remote', version: '7.1.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      state.calls.push({ name: request.params.name, args, authorization });
      const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
      switch (request.params.name) {
        case 'add':
          return text(String(Number(args.a) + Number(args.b)));
        case 'whoami':
          return text(authorization ?? 'no Authorization header');
        case 'fail':
          return { ...text('the tool failed on purpose'), isError: true };
        case 'huge':
          return text('x'.repeat(3 * 1024 * 1024));
        case 'slow':
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Number(args.seconds ?? 60) * 1000);
            const stop = () => {
              state.cancelled++;
              clearTimeout(timer);
              resolve();
            };
            AbortSignal.any([extra.signal, gone.signal]).addEventListener('abort', stop, { once: true });
          });
          return text('slept');
        default:
          return { ...text(`no tool ${request.params.name}`), isError: true };
      }
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const httpServer = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    handle(req, res).catch(() => res.headersSent || res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => httpServer.listen(0, OUTSIDE_HOST, resolve));
  const { port } = httpServer.address() as { port: number };
  state.url = `http://${OUTSIDE_HOST}:${port}/mcp`;
  state.close = () =>
    new Promise<void>((resolve) => {
      httpServer.closeAllConnections();
      httpServer.close(() => resolve());
    });
  return state;
}

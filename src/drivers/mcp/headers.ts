/** Header names the MCP transport (and HTTP itself) sets: a tool's `mcp.headers` may not name them. */
export const RESERVED_MCP_HEADERS = [
  'accept',
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'last-event-id',
  'mcp-protocol-version',
  'mcp-session-id',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

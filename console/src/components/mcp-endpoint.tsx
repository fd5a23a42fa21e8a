// The organization's MCP endpoint (docs/mcp.md): its URL and a client configuration to copy, with a key of
// one's own in place of the placeholder.
import { Section } from '../ui';

export function McpEndpoint() {
  const url = `${window.location.origin}/mcp`;
  const configuration = JSON.stringify(
    {
      mcpServers: {
        tarmac: { type: 'streamable-http', url, headers: { Authorization: 'Bearer <your API key>' } },
      },
    },
    null,
    2,
  );
  return (
    <Section title="MCP">
      <p className="muted">
        MCP clients (Claude Desktop, IDE agents, griptape&apos;s MCPTool) use this organization&apos;s structures,
        functions and knowledge bases as tools at <span className="mono">{url}</span>, with an API key (a viewer&apos;s
        key lists them; running them needs a member&apos;s).
      </p>
      <div className="run-form">
        <label htmlFor="mcp-configuration">Client configuration</label>
        <textarea
          id="mcp-configuration"
          readOnly
          rows={configuration.split('\n').length}
          value={configuration}
          onFocus={(e) => e.target.select()}
        />
      </div>
    </Section>
  );
}

// A tool of `mcp` code: the remote MCP server it names and the tools its newest successful deployment listed
// (each is an activity of the tool, offered to assistants as a function). Deploying again lists them afresh.
import type { Deployment, McpListing } from '../api/code-resources';
import { Section, shortId } from '../ui';

export function McpServerTools({ url, deployments }: { url: string; deployments: Deployment[] | undefined }) {
  const listed = deployments?.find((d) => d.status === 'SUCCEEDED');
  const listing = (listed?.status_detail ?? {}) as McpListing;
  return (
    <Section title="MCP server">
      <p>
        <span className="mono">{url}</span>
        {listing.mcp_server && (
          <span className="muted">
            {' '}
            — {listing.mcp_server.name} {listing.mcp_server.version}, listed by deployment{' '}
            {shortId(listed?.deployment_id)}
          </span>
        )}
      </p>
      {!listed && <p className="muted">No deployment has listed this server's tools yet (see its deployments).</p>}
      {listed && (
        <table className="list" aria-label="Tools of the MCP server">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {(listing.mcp_tools ?? []).map((t) => (
              <tr key={t.name}>
                <td className="mono">{t.name}</td>
                <td>{t.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {listed && !listing.mcp_tools?.length && <p className="muted">The server lists no tools.</p>}
    </Section>
  );
}

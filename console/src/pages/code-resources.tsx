// Functions or tools of the organization (paged by the server) and a form that creates one from the
// built-in example project, whose first deployment starts at once; for tools, one that connects a remote MCP server.
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { createMcpTool, createResource, listResources, type CodeKind } from '../api/code-resources';
import { listSecrets } from '../api/secrets';
import { queryKeys } from '../api/query-keys';
import { ErrorBox, Pager, Section, shortId, Time } from '../ui';
import { Writes } from '../role';

export const PLURAL: Record<CodeKind, string> = { function: 'Functions', tool: 'Tools' };

export function CodeResourcesPage({ kind }: { kind: CodeKind }) {
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const navigate = useNavigate();
  const list = useQuery({
    queryKey: queryKeys.codeResources(kind, page),
    placeholderData: keepPreviousData,
    queryFn: () => listResources(kind, page),
  });
  const detail = kind === 'function' ? '/functions/$resourceId' : '/tools/$resourceId';
  const create = useMutation({
    mutationFn: () => createResource(kind, name),
    onSuccess: (r) => navigate({ to: detail, params: { resourceId: r.id } }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>{PLURAL[kind]}</h1>
      <Writes>
        <Section title={`New ${kind} from the example project`}>
          <form onSubmit={submit} className="inline-form">
            <label htmlFor={`${kind}-name`}>Name</label>
            <input
              id={`${kind}-name`}
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={200}
            />
            <button type="submit" disabled={!name.trim() || create.isPending}>
              Create and deploy
            </button>
          </form>
          <ErrorBox error={create.error} />
        </Section>
        {kind === 'tool' && (
          <ConnectMcpServer onCreated={(id) => navigate({ to: detail, params: { resourceId: id } })} />
        )}
      </Writes>
      <ErrorBox error={list.error} />
      <table className="list" aria-label={PLURAL[kind]}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Latest deployment</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.items.map((r) => (
            <tr key={r.id}>
              <td>
                <Link to={detail} params={{ resourceId: r.id }}>
                  {r.name}
                </Link>
              </td>
              <td className="mono">{shortId(r.latest_deployment_id ?? undefined)}</td>
              <td>
                <Time at={r.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.items.length === 0 && <p className="muted">No {kind} yet.</p>}
      {list.data && <Pager page={page} totalPages={list.data.totalPages} onPage={setPage} />}
    </>
  );
}

/** A tool of a remote MCP server (Streamable HTTP): its URL and, optionally, a secret sent as its Authorization header. */
function ConnectMcpServer({ onCreated }: { onCreated: (id: string) => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [secretId, setSecretId] = useState('');
  const secrets = useQuery({ queryKey: queryKeys.secrets, queryFn: listSecrets });
  const create = useMutation({
    mutationFn: () => createMcpTool(name, url, secretId || undefined),
    onSuccess: (r) => onCreated(r.id),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title="New tool from an MCP server">
      <form onSubmit={submit} className="inline-form">
        <label htmlFor="mcp-tool-name">Tool name</label>
        <input id="mcp-tool-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        <label htmlFor="mcp-tool-url">Server URL</label>
        <input
          id="mcp-tool-url"
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          required
          placeholder="https://mcp.example.com/mcp"
        />
        <label htmlFor="mcp-tool-secret">Authorization</label>
        <select id="mcp-tool-secret" value={secretId} onChange={(e) => setSecretId(e.target.value)}>
          <option value="">none</option>
          {secrets.data?.secrets.map((s) => (
            <option key={s.secret_id} value={s.secret_id}>
              secret {s.name}
            </option>
          ))}
        </select>
        <button type="submit" disabled={!name.trim() || !url.trim() || create.isPending}>
          Connect and list its tools
        </button>
      </form>
      <ErrorBox error={create.error ?? secrets.error} />
    </Section>
  );
}

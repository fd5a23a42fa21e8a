// Settings: API keys (an admin sees the organization's and makes organization keys with a role; anyone else
// their own; the value is shown once; an admin revokes: deleted, it gets 401 from then on), the names of the
// secrets (values never leave the server), the MCP endpoint, the members with their roles, and the invites.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createApiKey, createOwnApiKey, listApiKeys, listOwnApiKeys, revokeApiKey } from '../api/api-keys';
import { queryKeys } from '../api/query-keys';
import { listSecrets } from '../api/secrets';
import { McpEndpoint } from '../components/mcp-endpoint';
import { Invites, Members } from '../components/members';
import { atLeast, ROLES, useCurrentSession, type Role } from '../role';
import { ErrorBox, Section, Time } from '../ui';

/** An admin's view: every key of the organization. Anyone else: their own keys. */
function ApiKeys({ organizationId, userId, role }: { organizationId: string; userId: string; role: Role }) {
  const queries = useQueryClient();
  const admin = atLeast(role, 'admin');
  const scope = admin ? organizationId : `user:${userId}`;
  const keys = useQuery({
    queryKey: queryKeys.apiKeys(scope),
    queryFn: () => (admin ? listApiKeys(organizationId) : listOwnApiKeys(userId)),
  });
  const [name, setName] = useState('');
  const [keyRole, setKeyRole] = useState<Role>('member');
  const [created, setCreated] = useState<{ name: string; value: string } | undefined>();
  const create = useMutation({
    mutationFn: () => (admin ? createApiKey(organizationId, name, keyRole) : createOwnApiKey(userId, name)),
    onSuccess: (key) => {
      setCreated({ name: key.name, value: key.value });
      setName('');
    },
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.apiKeys(scope) }),
  });
  const revoke = useMutation({
    mutationFn: revokeApiKey,
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.apiKeys(scope) }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title={admin ? 'API keys' : 'Your API keys'}>
      {!admin && <p className="muted">Your keys act as you, with your role ({role}). An admin revokes keys.</p>}
      <form onSubmit={submit} className="inline-form">
        <label htmlFor="new-key-name">New key name</label>
        <input id="new-key-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        {admin && (
          <>
            <label htmlFor="new-key-role">Organization key as</label>
            <select id="new-key-role" value={keyRole} onChange={(e) => setKeyRole(e.target.value as Role)}>
              {ROLES.filter((r) => atLeast(role, r)).map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="submit" disabled={!name.trim() || create.isPending}>
          Create key
        </button>
      </form>
      {created && (
        <div className="once" role="status">
          <p>
            Key <strong>{created.name}</strong> created. Copy it now: it is shown only once.
          </p>
          <output className="mono secret-value" aria-label="New key value">
            {created.value}
          </output>
          <button type="button" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
      <ErrorBox error={keys.error ?? create.error ?? revoke.error} />
      <table className="list" aria-label="API keys">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Active</th>
            <th scope="col">Last used</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.data?.api_keys.map((k) => (
            <tr key={k.api_key_id}>
              <td>{k.name}</td>
              <td>{k.user_id ? 'user' : `organization (${k.role ?? 'member'})`}</td>
              <td>{k.active ? 'yes' : 'no'}</td>
              <td>
                <Time at={k.last_used} />
              </td>
              <td>
                <Time at={k.created_at} />
              </td>
              <td>
                {admin && (
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Revoke ${k.name}`}
                    onClick={() =>
                      window.confirm(`Revoke the key "${k.name}"? It stops working at once.`) &&
                      revoke.mutate(k.api_key_id)
                    }
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function Secrets() {
  const secrets = useQuery({
    queryKey: queryKeys.secrets,
    queryFn: listSecrets,
  });
  return (
    <Section title="Secrets">
      <p className="muted">Names only: a secret's value never leaves the server.</p>
      <ErrorBox error={secrets.error} />
      <table className="list" aria-label="Secrets">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Last used</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {secrets.data?.secrets.map((s) => (
            <tr key={s.secret_id}>
              <td className="mono">{s.name}</td>
              <td>
                <Time at={s.last_used} />
              </td>
              <td>
                <Time at={s.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {secrets.data && secrets.data.secrets.length === 0 && <p className="muted">No secret yet.</p>}
    </Section>
  );
}

export function SettingsPage() {
  const me = useCurrentSession();
  return (
    <>
      <h1>Settings</h1>
      {me && (
        <p className="muted">
          Signed in as {me.user.email}, {me.role} of this organization.
        </p>
      )}
      {me && <ApiKeys organizationId={me.organization_id} userId={me.user.user_id} role={me.role} />}
      <Secrets />
      <McpEndpoint />
      {me && <Members organizationId={me.organization_id} />}
      {me && <Invites organizationId={me.organization_id} />}
    </>
  );
}

// Settings: the organization's API keys (create: the value is shown once; revoke: deleted, it gets 401 from
// then on), the names of its secrets (values never leave the server), its members and invites.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createApiKey, listApiKeys, revokeApiKey } from '../api/api-keys';
import { queryKeys } from '../api/query-keys';
import { listSecrets } from '../api/secrets';
import { listUsers } from '../api/users';
import { Invites, Members } from '../components/members';
import { ErrorBox, Section, Time } from '../ui';

function ApiKeys({ organizationId }: { organizationId: string }) {
  const queries = useQueryClient();
  const keys = useQuery({
    queryKey: queryKeys.apiKeys(organizationId),
    queryFn: () => listApiKeys(organizationId),
  });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; value: string } | undefined>();
  const create = useMutation({
    mutationFn: () => createApiKey(organizationId, name),
    onSuccess: (key) => {
      setCreated({ name: key.name, value: key.value });
      setName('');
    },
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.apiKeys(organizationId) }),
  });
  const revoke = useMutation({
    mutationFn: revokeApiKey,
    onSettled: () => queries.invalidateQueries({ queryKey: queryKeys.apiKeys(organizationId) }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title="API keys">
      <form onSubmit={submit} className="inline-form">
        <label htmlFor="new-key-name">New key name</label>
        <input id="new-key-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
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
              <td>{k.user_id ? 'user' : 'organization'}</td>
              <td>{k.active ? 'yes' : 'no'}</td>
              <td>
                <Time at={k.last_used} />
              </td>
              <td>
                <Time at={k.created_at} />
              </td>
              <td>
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
  // The key's organization: the one every user of GET /api/users (the caller's organization) belongs to.
  const users = useQuery({ queryKey: queryKeys.users, queryFn: listUsers });
  const organizationId = users.data?.users
    .map((u) => u.organizations)
    .reduce((common, orgs) => common.filter((o) => orgs.includes(o)))[0];
  return (
    <>
      <h1>Settings</h1>
      <ErrorBox error={users.error} />
      {organizationId && <ApiKeys organizationId={organizationId} />}
      <Secrets />
      {organizationId && <Members organizationId={organizationId} />}
      {organizationId && <Invites organizationId={organizationId} />}
    </>
  );
}

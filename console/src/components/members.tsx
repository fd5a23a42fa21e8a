// The organization's members and its invites: invite by email (the invite expires on its own), withdraw a
// pending one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, data } from '../api/client';
import { ErrorBox, Section, StatusBadge, Time } from '../ui';

export function Members({ organizationId }: { organizationId: string }) {
  const path = { organization_id: organizationId };
  const members = useQuery({
    queryKey: ['members', organizationId],
    queryFn: () =>
      data(api.GET('/api/organizations/{organization_id}/users', { params: { path, query: { page_size: 100 } } })),
  });
  return (
    <Section title="Members">
      <ErrorBox error={members.error} />
      <table className="list" aria-label="Members">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Since</th>
          </tr>
        </thead>
        <tbody>
          {members.data?.users.map((u) => (
            <tr key={u.user_id}>
              <td>{u.name ?? <span className="muted">—</span>}</td>
              <td className="mono">{u.email}</td>
              <td>
                <Time at={u.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

export function Invites({ organizationId }: { organizationId: string }) {
  const path = { organization_id: organizationId };
  const queries = useQueryClient();
  const [email, setEmail] = useState('');
  const invites = useQuery({
    queryKey: ['invites', organizationId],
    queryFn: () =>
      data(api.GET('/api/organizations/{organization_id}/invites', { params: { path, query: { page_size: 100 } } })),
  });
  const refresh = () => void queries.invalidateQueries({ queryKey: ['invites', organizationId] });
  const invite = useMutation({
    mutationFn: () =>
      data(api.POST('/api/organizations/{organization_id}/invites', { params: { path }, body: { email } })),
    onSuccess: () => setEmail(''),
    onSettled: refresh,
  });
  const withdraw = useMutation({
    mutationFn: (id: string) => data(api.DELETE('/api/invites/{invite_id}', { params: { path: { invite_id: id } } })),
    onSettled: refresh,
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    invite.mutate();
  };
  return (
    <Section title="Invites">
      <form onSubmit={submit} className="inline-form">
        <label htmlFor="invite-email">Email to invite</label>
        <input id="invite-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        <button type="submit" disabled={!email.trim() || invite.isPending}>
          Invite
        </button>
      </form>
      <ErrorBox error={invites.error ?? invite.error ?? withdraw.error} />
      <table className="list" aria-label="Invites">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Status</th>
            <th scope="col">Expires</th>
            <th scope="col">Sent</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {invites.data?.invites.map((i) => (
            <tr key={i.invite_id}>
              <td className="mono">{i.email}</td>
              <td>
                <StatusBadge status={i.status} />
              </td>
              <td>
                <Time at={i.expires_at} />
              </td>
              <td>
                <Time at={i.created_at} />
              </td>
              <td>
                {i.status === 'PENDING' && (
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Withdraw the invite of ${i.email}`}
                    onClick={() => withdraw.mutate(i.invite_id)}
                  >
                    Withdraw
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {invites.data && invites.data.invites.length === 0 && <p className="muted">No invite.</p>}
    </Section>
  );
}

// The organization's members and its invites: invite by email (the invite expires on its own; its link is shown
// once, to pass on, when no mail is sent: no SMTP_URL), withdraw a pending one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createInvite, listInvites, withdrawInvite } from '../api/invites';
import { queryKeys } from '../api/query-keys';
import { listMembers } from '../api/users';
import { ErrorBox, Section, StatusBadge, Time } from '../ui';

export function Members({ organizationId }: { organizationId: string }) {
  const members = useQuery({
    queryKey: queryKeys.members(organizationId),
    queryFn: () => listMembers(organizationId),
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
  const queries = useQueryClient();
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<{ email: string; url: string } | undefined>();
  const invites = useQuery({
    queryKey: queryKeys.invites(organizationId),
    queryFn: () => listInvites(organizationId),
  });
  const refresh = () => void queries.invalidateQueries({ queryKey: queryKeys.invites(organizationId) });
  const invite = useMutation({
    mutationFn: () => createInvite(organizationId, email),
    onSuccess: (made) => {
      setEmail('');
      if (made.accept_url) setSent({ email: made.email, url: made.accept_url });
    },
    onSettled: refresh,
  });
  const withdraw = useMutation({
    mutationFn: withdrawInvite,
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
      {sent && (
        <div className="card link-to-pass-on" role="status">
          <label htmlFor="invite-link">Pass this link on to {sent.email}: it is shown only now</label>
          <input id="invite-link" className="mono" readOnly value={sent.url} onFocus={(e) => e.target.select()} />
        </div>
      )}
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

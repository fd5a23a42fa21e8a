// The organization's members with their roles (an admin changes them and removes members, up to their own
// role), and its invites: an admin invites by email with a role (the invite expires on its own; its link is
// shown once, to pass on, when no mail is sent: no SMTP_URL) and withdraws a pending one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createInvite, listInvites, withdrawInvite } from '../api/invites';
import { queryKeys } from '../api/query-keys';
import { changeMemberRole, listMembers, removeMember } from '../api/users';
import { atLeast, ROLES, useCurrentSession, type Role } from '../role';
import { ErrorBox, Section, StatusBadge, Time } from '../ui';

/** The roles the signed-in person may give: up to their own. */
function givableRoles(own: Role | undefined): Role[] {
  return own ? ROLES.filter((r) => atLeast(own, r)) : [];
}

export function Members({ organizationId }: { organizationId: string }) {
  const queries = useQueryClient();
  const me = useCurrentSession();
  const manages = me !== undefined && atLeast(me.role, 'admin');
  const members = useQuery({
    queryKey: queryKeys.members(organizationId),
    queryFn: () => listMembers(organizationId),
  });
  const refresh = () => void queries.invalidateQueries({ queryKey: queryKeys.members(organizationId) });
  const change = useMutation({
    mutationFn: (c: { userId: string; role: Role }) => changeMemberRole(organizationId, c.userId, c.role),
    onSettled: () => {
      refresh();
      void queries.invalidateQueries({ queryKey: queryKeys.session }); // one's own role may have changed
    },
  });
  const remove = useMutation({
    mutationFn: (userId: string) => removeMember(organizationId, userId),
    onSettled: refresh,
  });
  return (
    <Section title="Members">
      <ErrorBox error={members.error ?? change.error ?? remove.error} />
      <table className="list" aria-label="Members">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Since</th>
            {manages && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {members.data?.members.map((m) => {
            // An admin acts on no one above their own role.
            const editable = manages && atLeast(me.role, m.role);
            return (
              <tr key={m.user_id}>
                <td>{m.name ?? <span className="muted">—</span>}</td>
                <td className="mono">{m.email}</td>
                <td>
                  {editable ? (
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      disabled={change.isPending}
                      onChange={(e) => change.mutate({ userId: m.user_id, role: e.target.value as Role })}
                    >
                      {givableRoles(me.role).map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td>
                  <Time at={m.joined_at} />
                </td>
                {manages && (
                  <td>
                    {editable && m.user_id !== me.user.user_id && (
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Remove ${m.email}`}
                        onClick={() =>
                          window.confirm(`Remove ${m.email}? Their keys here stop working at once.`) &&
                          remove.mutate(m.user_id)
                        }
                      >
                        Remove
                      </button>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </Section>
  );
}

export function Invites({ organizationId }: { organizationId: string }) {
  const queries = useQueryClient();
  const me = useCurrentSession();
  const manages = me !== undefined && atLeast(me.role, 'admin');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [sent, setSent] = useState<{ email: string; url: string } | undefined>();
  const invites = useQuery({
    queryKey: queryKeys.invites(organizationId),
    queryFn: () => listInvites(organizationId),
  });
  const refresh = () => void queries.invalidateQueries({ queryKey: queryKeys.invites(organizationId) });
  const invite = useMutation({
    mutationFn: () => createInvite(organizationId, email, role),
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
      {manages && (
        <form onSubmit={submit} className="inline-form">
          <label htmlFor="invite-email">Email to invite</label>
          <input id="invite-email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
          <label htmlFor="invite-role">As</label>
          <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {givableRoles(me.role).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <button type="submit" disabled={!email.trim() || invite.isPending}>
            Invite
          </button>
        </form>
      )}
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
            <th scope="col">Role</th>
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
              <td>{i.role}</td>
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
                {manages && i.status === 'PENDING' && (
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

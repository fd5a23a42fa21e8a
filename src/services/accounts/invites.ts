import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DataSource, MoreThan } from 'typeorm';
import { conflict, forbidden, HttpError, notFound, temporarilyUnavailable } from '../../errors';
import { hashPassword } from '../../security/passwords';
import { hashSecretToken, newSecretToken } from '../../security/secret-tokens';
import type { Caller } from '../caller';
import { Invite, User } from '../../persistence/entities';
import { workflowIdOf } from '../../temporal/workflow-start';
import { INVITE_RECORD } from '../../jobs/kinds';
import { transition } from '../../jobs/transition';
import { addMember, isMember, upsertUserByEmail } from './accounts';
import { atLeast, roleRefused, type Role } from './roles';
import { insertAndStart } from '../../jobs/create';
import { waitFor } from '../../jobs/await-end';
import { respondSignal, withdrawSignal, workflowStart, type InviteOutcome } from '../../temporal/contracts';

/** How long RespondToInvite waits for the workflow to record the answer before replying anyway. */
const RESPONSE_WAIT_MS = 10_000;

/** Where an invited person follows the link: the console's page, the token in the fragment (never in a log). */
export function inviteLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/console/accept-invite#token=${token}`;
}

/**
 * Makes the invite and its workflow. Without mail, answers the link's token too (its only appearance); with
 * mail (`mail`: SMTP_URL is set), the workflow makes the link and mails it, and no token is answered.
 */
export async function createInvite(
  deps: { ds: DataSource; temporal: Client; taskQueue: string; ttlSeconds: number; mail: boolean },
  caller: Caller,
  email: string,
  role: Role,
): Promise<{ invite: Invite; linkToken: string | undefined }> {
  // No one gives a role above their own.
  if (!atLeast(caller.role, role)) throw roleRefused(caller.role, role, `An invite as ${role}`);
  const normalized = email.trim().toLowerCase();
  const existingUser = await deps.ds.getRepository(User).findOneBy({ email: normalized });
  if (existingUser && (await isMember(deps.ds, caller.organizationId, existingUser.user_id))) {
    throw conflict(`${normalized} is already a member of this organization`);
  }
  const pending = await deps.ds.getRepository(Invite).findOneBy({
    organization_id: caller.organizationId,
    email: normalized,
    status: 'PENDING',
    expires_at: MoreThan(new Date()),
  });
  if (pending) throw conflict(`A pending invite for ${normalized} already exists (${pending.invite_id})`);

  const now = new Date();
  const linkToken = deps.mail ? undefined : newSecretToken();
  const invite: Invite = {
    invite_id: randomUUID(),
    organization_id: caller.organizationId,
    email: normalized,
    status: 'PENDING',
    role,
    expires_at: new Date(now.getTime() + deps.ttlSeconds * 1000),
    responded_at: null,
    created_by: caller.actor,
    link_token_hash: linkToken ? hashSecretToken(linkToken) : null,
    created_at: now,
    updated_at: now,
  };
  const made = await insertAndStart(deps.ds, deps.temporal, {
    taskQueue: deps.taskQueue,
    resource: {
      kind: 'invite',
      id: invite.invite_id,
      organizationId: invite.organization_id,
      summary: `Invite ${normalized}`,
    },
    insert: (em) => em.getRepository(Invite).save(invite),
    start: workflowStart.invite({
      inviteId: invite.invite_id,
      organizationId: invite.organization_id,
      expiresAt: invite.expires_at.toISOString(),
      ...(deps.mail ? { mail: true } : {}),
    }),
  });
  delete made.link_token_hash;
  return { invite: made, linkToken };
}

export const INVITE_LINK_REFUSED = 'This invite link is unknown, or its invite was deleted: ask for a new invite';

/** The invite a link's token names, with whether its email has an account here and whether it has a password. */
export async function findInviteByLink(ds: DataSource, token: string) {
  const invite = await ds.getRepository(Invite).findOneBy({ link_token_hash: hashSecretToken(token) });
  if (!invite) throw new HttpError(404, 'NotFoundError', [{ message: INVITE_LINK_REFUSED }]);
  const [user]: Array<{ has_password: boolean }> = await ds.query(
    `SELECT password_hash IS NOT NULL AS has_password FROM users WHERE email = $1`,
    [invite.email],
  );
  return { invite, userExists: user !== undefined, hasPassword: user?.has_password === true };
}

/**
 * Accepts an invite by its link: the link stands for the invited mailbox, as a signed-in invitee would. A person
 * with no password yet (a new user, or one made by an earlier invite) must set one, and it is set only once the
 * invite is ACCEPTED, so a refused acceptance leaves no account that can sign in. A person who has a password
 * keeps it (a `password` sent then is a 409: sign in instead; nothing here may change a password).
 */
export async function acceptInviteByLink(
  deps: { ds: DataSource; temporal: Client },
  token: string,
  password: string | undefined,
): Promise<Invite> {
  const { invite, hasPassword } = await findInviteByLink(deps.ds, token);
  if (hasPassword && password !== undefined)
    throw conflict(
      `${invite.email} already has a password: sign in with it, then accept (no password in this request)`,
    );
  if (!hasPassword && password === undefined)
    throw new HttpError(400, 'ValidationError', [
      { message: `${invite.email} has no password yet: send the one to set`, path: '/body/password' },
    ]);
  // A retry of an acceptance whose answer was lost finds the invite ACCEPTED and the password not yet set.
  const retried = invite.status === 'ACCEPTED' && !hasPassword;
  if (!retried) assertAnswerable(invite);
  const passwordHash = password === undefined ? undefined : await hashPassword(password);
  const settled = retried ? invite : await answer(deps, invite, 'ACCEPTED', `invite-link:${invite.email}`);
  if (settled.status !== 'ACCEPTED')
    throw temporarilyUnavailable('The acceptance is not recorded yet: send the same request again in a moment');
  if (passwordHash)
    await deps.ds.query(
      `UPDATE users SET password_hash = $1, updated_at = now() WHERE email = $2 AND password_hash IS NULL`,
      [passwordHash, invite.email],
    );
  return settled;
}

/**
 * Accepts an invite by its link for a person the OIDC provider vouches for (docs/people.md#oidc-sign-in): the
 * provider's verified email must be the invite's. No password is set: they sign in through the provider. An
 * invite already ACCEPTED (the same person following the link again) answers as it is.
 */
export async function acceptInviteByVerifiedEmail(
  deps: { ds: DataSource; temporal: Client },
  token: string,
  verifiedEmail: string,
): Promise<Invite> {
  const { invite } = await findInviteByLink(deps.ds, token);
  if (invite.email !== verifiedEmail)
    throw forbidden(`This invite is for ${invite.email}; the OIDC provider signed you in as ${verifiedEmail}`);
  if (invite.status === 'ACCEPTED') return invite;
  assertAnswerable(invite);
  const settled = await answer(deps, invite, 'ACCEPTED', `invite-link:${invite.email}`);
  if (settled.status !== 'ACCEPTED')
    throw temporarilyUnavailable('The acceptance is not recorded yet: follow the invite link again in a moment');
  return settled;
}

/** The caller's user email, or undefined for organization keys. */
export async function callerEmail(ds: DataSource, caller: Caller): Promise<string | undefined> {
  if (!caller.userId) return undefined;
  return (await ds.getRepository(User).findOneBy({ user_id: caller.userId }))?.email;
}

/** An invite is visible to its organization and to the person invited. */
export async function findVisibleInvite(ds: DataSource, caller: Caller, inviteId: string) {
  const invite = await ds.getRepository(Invite).findOneBy({ invite_id: inviteId });
  const email = await callerEmail(ds, caller);
  if (!invite || (invite.organization_id !== caller.organizationId && invite.email !== email)) throw notFound('Invite');
  return { invite, isInvitee: invite.email === email };
}

export async function respondToInvite(
  deps: { ds: DataSource; temporal: Client },
  caller: Caller,
  inviteId: string,
  response: 'ACCEPTED' | 'REJECTED',
): Promise<Invite> {
  const { invite, isInvitee } = await findVisibleInvite(deps.ds, caller, inviteId);
  if (!isInvitee) throw forbidden('Only the invited user can respond to an invite');
  assertAnswerable(invite);
  return answer(deps, invite, response, caller.actor);
}

/** Tells the invite's workflow the answer and waits (a while) until it is recorded; the invite then. */
async function answer(
  deps: { ds: DataSource; temporal: Client },
  invite: Invite,
  response: 'ACCEPTED' | 'REJECTED',
  respondedBy: string,
): Promise<Invite> {
  await deps.temporal.workflow
    .getHandle(workflowIdOf('invite', invite.invite_id))
    .signal(respondSignal, { response, respondedBy });
  const settled = await waitFor(
    () => deps.ds.getRepository(Invite).findOneBy({ invite_id: invite.invite_id }),
    (row) => !row || row.status !== 'PENDING',
    RESPONSE_WAIT_MS,
  );
  if (settled?.status === 'EXPIRED') assertAnswerable(settled);
  if (settled && settled.status !== 'PENDING' && settled.status !== response) {
    throw conflict(`This invite was already answered: ${settled.status}`);
  }
  return settled ?? invite;
}

function assertAnswerable(invite: Invite) {
  if (invite.status === 'EXPIRED' || (invite.status === 'PENDING' && invite.expires_at.getTime() <= Date.now())) {
    throw conflict(`This invite expired at ${invite.expires_at.toISOString()}`);
  }
  if (invite.status !== 'PENDING') throw conflict(`This invite was already answered: ${invite.status}`);
}

/** Deletes the invite and tells its workflow to stop waiting. */
export async function deleteInvite(deps: { ds: DataSource; temporal: Client }, caller: Caller, inviteId: string) {
  const invite = await deps.ds
    .getRepository(Invite)
    .findOneBy({ invite_id: inviteId, organization_id: caller.organizationId });
  if (!invite) throw notFound('Invite');
  await deps.ds.getRepository(Invite).delete({ invite_id: inviteId });
  if (invite.status === 'PENDING') {
    await deps.temporal.workflow
      .getHandle(workflowIdOf('invite', inviteId))
      .signal(withdrawSignal)
      .catch((err: { name?: string }) => {
        if (err?.name !== 'WorkflowNotFoundError') throw err; // already closed: nothing to stop
      });
  }
}

/**
 * The invite workflow's answer: PENDING → ACCEPTED/REJECTED, guarded: only a pending, unexpired invite moves,
 * so a retry (or a race with expiry) changes nothing. ACCEPTED adds the invited user (created if new) to the
 * organization. Returns the invite's status after the call, or GONE when the invite was deleted.
 */
export async function applyInviteResponse(
  ds: DataSource,
  inviteId: string,
  response: 'ACCEPTED' | 'REJECTED',
): Promise<InviteOutcome> {
  return ds.transaction(async (em) => {
    // Only a pending invite that has not expired moves.
    const moved = (await transition(
      em,
      INVITE_RECORD,
      inviteId,
      response,
      { responded_at: new Date() },
      'expires_at > now()',
    )) as Invite | undefined;
    if (moved && response === 'ACCEPTED') {
      const user = await upsertUserByEmail(em, moved.email);
      await addMember(em, moved.organization_id, user.user_id, moved.role);
    }
    const row = await em.getRepository(Invite).findOneBy({ invite_id: inviteId });
    return row ? (row.status as InviteOutcome) : 'GONE';
  });
}

/** PENDING → EXPIRED when its time has come; answers the status after the call. */
export async function expireInvite(ds: DataSource, inviteId: string): Promise<InviteOutcome> {
  await transition(ds, INVITE_RECORD, inviteId, 'EXPIRED');
  const row = await ds.getRepository(Invite).findOneBy({ invite_id: inviteId });
  return row ? (row.status as InviteOutcome) : 'GONE';
}

import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DataSource, MoreThan } from 'typeorm';
import { conflict, forbidden, notFound } from '../../errors';
import type { Caller } from '../caller';
import { Invite, User } from '../../persistence/entities';
import { workflowIdOf } from '../../temporal/workflow-start';
import { INVITE_RECORD } from '../../jobs/kinds';
import { transition } from '../../jobs/transition';
import { addMember, isMember, upsertUserByEmail } from './accounts';
import { insertAndStart } from '../../jobs/create';
import { waitFor } from '../../jobs/await-end';
import { respondSignal, withdrawSignal, workflowStart, type InviteOutcome } from '../../temporal/contracts';

/** How long RespondToInvite waits for the workflow to record the answer before replying anyway. */
const RESPONSE_WAIT_MS = 10_000;

export async function createInvite(
  deps: { ds: DataSource; temporal: Client; taskQueue: string; ttlSeconds: number },
  caller: Caller,
  email: string,
): Promise<Invite> {
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
  const invite: Invite = {
    invite_id: randomUUID(),
    organization_id: caller.organizationId,
    email: normalized,
    status: 'PENDING',
    expires_at: new Date(now.getTime() + deps.ttlSeconds * 1000),
    responded_at: null,
    created_by: caller.actor,
    created_at: now,
    updated_at: now,
  };
  return insertAndStart(deps.ds, deps.temporal, {
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
    }),
  });
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
  await deps.temporal.workflow
    .getHandle(workflowIdOf('invite', invite.invite_id))
    .signal(respondSignal, { response, respondedBy: caller.actor });
  const settled = await waitFor(
    () => deps.ds.getRepository(Invite).findOneBy({ invite_id: inviteId }),
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
      await addMember(em, moved.organization_id, user.user_id);
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

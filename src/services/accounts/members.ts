// Organization members: their roles changed, and their removal (docs/people.md#roles). No one acts on a member
// of a higher role than their own or gives a role above it, and an organization always keeps an owner. A member
// removed loses the organization's API keys made for them at once (the key cache hears of each deletion); a
// role changed reaches their keys' cached callers through the memberships trigger (migrations/1767180000000-roles.ts).
import type { DataSource, EntityManager } from 'typeorm';
import { ApiKey, Membership } from '../../persistence/entities';
import { conflict, notFound } from '../../errors';
import type { Caller } from '../caller';
import { atLeast, roleRefused, type Role } from './roles';

/** The organization's memberships, locked: two concurrent changes cannot both pass the last-owner check. */
async function lockedMembers(tx: EntityManager, caller: Caller, userId: string) {
  const members: Array<{ user_id: string; role: Role }> = await tx.query(
    `SELECT user_id, role FROM memberships WHERE organization_id = $1 ORDER BY user_id FOR UPDATE`,
    [caller.organizationId],
  );
  const target = members.find((m) => m.user_id === userId);
  if (!target) throw notFound('User');
  if (!atLeast(caller.role, target.role)) throw roleRefused(caller.role, target.role, `Acting on a ${target.role}`);
  const owners = members.filter((m) => m.role === 'owner').length;
  return { target, lastOwner: target.role === 'owner' && owners === 1 };
}

/**
 * Gives `userId` the role; answers the membership as it is now, and the hashes (hex) of the user's keys here
 * (so that this process forgets them before it answers; others hear of it from the trigger).
 */
export async function changeMemberRole(
  ds: DataSource,
  caller: Caller,
  userId: string,
  role: Role,
): Promise<{ membership: Membership; keyHashes: string[] }> {
  if (!atLeast(caller.role, role)) throw roleRefused(caller.role, role, `Giving the ${role} role`);
  return ds.transaction(async (tx) => {
    const { target, lastOwner } = await lockedMembers(tx, caller, userId);
    if (lastOwner && role !== 'owner') {
      throw conflict('The last owner of an organization keeps the role: make another member an owner first');
    }
    if (target.role !== role) {
      await tx.getRepository(Membership).update({ organization_id: caller.organizationId, user_id: userId }, { role });
    }
    const keys = await tx.getRepository(ApiKey).findBy({ organization_id: caller.organizationId, user_id: userId });
    return {
      membership: await tx
        .getRepository(Membership)
        .findOneByOrFail({ organization_id: caller.organizationId, user_id: userId }),
      keyHashes: keys.map((k) => k.key_hash.toString('hex')),
    };
  });
}

/** Removes `userId` from the caller's organization; answers the hashes (hex) of the API keys it deleted. */
export async function removeMember(ds: DataSource, caller: Caller, userId: string): Promise<string[]> {
  return ds.transaction(async (tx) => {
    const { lastOwner } = await lockedMembers(tx, caller, userId);
    if (lastOwner)
      throw conflict('The last owner of an organization cannot be removed: make another member an owner first');
    const keys = await tx.getRepository(ApiKey).findBy({ organization_id: caller.organizationId, user_id: userId });
    await tx.getRepository(ApiKey).delete({ organization_id: caller.organizationId, user_id: userId });
    await tx.getRepository(Membership).delete({ organization_id: caller.organizationId, user_id: userId });
    return keys.map((k) => k.key_hash.toString('hex'));
  });
}

/** The role of `userId` in the caller's organization, or 404 when they are not a member. */
export async function memberRole(ds: DataSource, caller: Caller, userId: string): Promise<Role> {
  const m = await ds.getRepository(Membership).findOneBy({ organization_id: caller.organizationId, user_id: userId });
  if (!m) throw notFound('User');
  return m.role;
}

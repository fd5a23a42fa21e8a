// Organization members: removing one. There are no roles (every member may do what a member does), so there is
// no role to change. A member removed loses the organization's API keys made for them at once (the key cache
// hears of each deletion); the last member stays, so an organization is never left without one.
import type { DataSource } from 'typeorm';
import { ApiKey, Membership } from '../../persistence/entities';
import { conflict, notFound } from '../../errors';
import type { Caller } from '../caller';

/** Removes `userId` from the caller's organization; answers the hashes (hex) of the API keys it deleted. */
export async function removeMember(ds: DataSource, caller: Caller, userId: string): Promise<string[]> {
  return ds.transaction(async (tx) => {
    // The organization's memberships, locked: two concurrent removals cannot both pass the last-member check.
    const members: Array<{ user_id: string }> = await tx.query(
      `SELECT user_id FROM memberships WHERE organization_id = $1 FOR UPDATE`,
      [caller.organizationId],
    );
    if (!members.some((m) => m.user_id === userId)) throw notFound('User');
    if (members.length === 1) throw conflict('The last member of an organization cannot be removed');
    const keys = await tx.getRepository(ApiKey).findBy({ organization_id: caller.organizationId, user_id: userId });
    await tx.getRepository(ApiKey).delete({ organization_id: caller.organizationId, user_id: userId });
    await tx.getRepository(Membership).delete({ organization_id: caller.organizationId, user_id: userId });
    return keys.map((k) => k.key_hash.toString('hex'));
  });
}

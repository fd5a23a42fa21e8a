import type { ActivityDeps } from './deps';
import type { InviteOutcome } from '../src/temporal/contracts';
import { addMember, upsertUserByEmail } from '../src/services/accounts/accounts';
import { Invite } from '../src/persistence/entities';
import { INVITE_RECORD } from '../src/jobs/kinds';
import { transition } from '../src/jobs/transition';

export function createInviteActivities({ ds }: ActivityDeps) {
  return {
    /**
     * PENDING → ACCEPTED/REJECTED, guarded: only a pending, unexpired invite moves, so a retry (or a
     * race with expiry) changes nothing. ACCEPTED adds the invited user (created if new) to the organization.
     * Returns the invite's status after the call, or GONE when the invite was deleted.
     */
    async applyInviteResponse(input: { inviteId: string; response: 'ACCEPTED' | 'REJECTED' }): Promise<InviteOutcome> {
      return ds.transaction(async (em) => {
        // Only a pending invite that has not expired moves.
        const moved = (await transition(
          em,
          INVITE_RECORD,
          input.inviteId,
          input.response,
          { responded_at: new Date() },
          'expires_at > now()',
        )) as Invite | undefined;
        if (moved && input.response === 'ACCEPTED') {
          const user = await upsertUserByEmail(em, moved.email);
          await addMember(em, moved.organization_id, user.user_id);
        }
        const row = await em.getRepository(Invite).findOneBy({ invite_id: input.inviteId });
        return row ? (row.status as InviteOutcome) : 'GONE';
      });
    },

    /** PENDING → EXPIRED when its time has come; answers the status after the call. */
    async expireInvite(input: { inviteId: string }): Promise<InviteOutcome> {
      await transition(ds, INVITE_RECORD, input.inviteId, 'EXPIRED');
      const row = await ds.getRepository(Invite).findOneBy({ invite_id: input.inviteId });
      return row ? (row.status as InviteOutcome) : 'GONE';
    },
  };
}

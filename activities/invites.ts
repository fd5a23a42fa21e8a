import type { ActivityDeps } from './deps';
import type { InviteOutcome } from '../src/temporal/contracts';
import { addMember, upsertUserByEmail } from '../src/services/accounts/accounts';
import { Invite } from '../src/persistence/entities';

export function createInviteActivities({ ds }: ActivityDeps) {
  return {
    /**
     * PENDING → ACCEPTED/REJECTED, guarded: only a pending, unexpired invite moves, so a retry (or a
     * race with expiry) changes nothing. ACCEPTED adds the invited user (created if new) to the organization.
     * Returns the invite's status after the call, or GONE when the invite was deleted.
     */
    async applyInviteResponse(input: { inviteId: string; response: 'ACCEPTED' | 'REJECTED' }): Promise<InviteOutcome> {
      return ds.transaction(async (em) => {
        const moved: Invite[] = await em
          .query(
            `UPDATE invites SET status = $2, responded_at = now(), updated_at = now()
            WHERE invite_id = $1 AND status = 'PENDING' AND expires_at > now()
            RETURNING organization_id, email`,
            [input.inviteId, input.response],
          )
          .then((r: [Invite[], number]) => r[0]);
        if (moved.length && input.response === 'ACCEPTED') {
          const user = await upsertUserByEmail(em, moved[0].email);
          await addMember(em, moved[0].organization_id, user.user_id);
        }
        const row = await em.getRepository(Invite).findOneBy({ invite_id: input.inviteId });
        return row ? (row.status as InviteOutcome) : 'GONE';
      });
    },

    /** PENDING → EXPIRED when its time has come; answers the status after the call. */
    async expireInvite(input: { inviteId: string }): Promise<InviteOutcome> {
      await ds.query(
        `UPDATE invites SET status = 'EXPIRED', updated_at = now() WHERE invite_id = $1 AND status = 'PENDING'`,
        [input.inviteId],
      );
      const row = await ds.getRepository(Invite).findOneBy({ invite_id: input.inviteId });
      return row ? (row.status as InviteOutcome) : 'GONE';
    },
  };
}

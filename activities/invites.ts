// Activities of the invite workflow: the guarded invite writes of src/services/accounts/invites.ts.
import type { ActivityDeps } from './deps';
import type { InviteOutcome } from '../src/temporal/contracts';
import { applyInviteResponse, expireInvite } from '../src/services/accounts/invites';

export function createInviteActivities({ ds }: ActivityDeps) {
  return {
    /** PENDING → ACCEPTED/REJECTED (guarded); the status after the call, or GONE when the invite was deleted. */
    async applyInviteResponse(input: { inviteId: string; response: 'ACCEPTED' | 'REJECTED' }): Promise<InviteOutcome> {
      return applyInviteResponse(ds, input.inviteId, input.response);
    },

    /** PENDING → EXPIRED when its time has come; answers the status after the call. */
    async expireInvite(input: { inviteId: string }): Promise<InviteOutcome> {
      return expireInvite(ds, input.inviteId);
    },
  };
}

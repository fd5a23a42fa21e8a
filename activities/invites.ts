// Activities of the invite workflow: the guarded invite writes of src/services/accounts/invites.ts, and the mail
// with its link (src/services/accounts/invite-mail.ts).
import type { ActivityDeps } from './deps';
import type { InviteOutcome } from '../src/temporal/contracts';
import { applyInviteResponse, expireInvite } from '../src/services/accounts/invites';
import { mailInviteLink, recordInviteMailFailure } from '../src/services/accounts/invite-mail';

export function createInviteActivities({ ds, config }: ActivityDeps) {
  return {
    /** Mails the invite's link (made anew); NOT_PENDING when it was answered, withdrawn or expired meanwhile. */
    async mailInvite(input: { inviteId: string }): Promise<'SENT' | 'NOT_PENDING'> {
      if (!config.mail) throw new Error('SMTP_URL is not set on this worker, so it cannot mail invites');
      return mailInviteLink({ ds, mail: config.mail, publicBaseUrl: config.publicBaseUrl }, input.inviteId);
    },

    /** The mail was given up after its retries: recorded on the invite. */
    async recordInviteMailFailure(input: { inviteId: string; error: string }): Promise<void> {
      await recordInviteMailFailure(ds, input.inviteId, input.error);
    },

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

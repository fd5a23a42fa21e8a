import { ActivityFailure, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  type InviteInput,
  type InviteOutcome,
  type InviteResponseSignal,
  respondSignal,
  withdrawSignal,
} from '../src/temporal/contracts';
import { STATUS_WRITES } from './run-scope';

const { applyInviteResponse, expireInvite, recordInviteMailFailure } = proxyActivities<Activities>(STATUS_WRITES);
/** An SMTP server down for a while is waited out: about two hours of retries, then the mail is given up. */
const { mailInvite } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes', maximumAttempts: 16 },
});

/** An invite is PENDING until answered (signal) or until its expiry timer fires; with SMTP, its link is mailed first. */
export async function inviteWorkflow(input: InviteInput): Promise<InviteOutcome | 'WITHDRAWN'> {
  let response: InviteResponseSignal | undefined;
  let withdrawn = false;
  setHandler(respondSignal, (r) => {
    response ??= r;
  });
  setHandler(withdrawSignal, () => {
    withdrawn = true;
  });

  // Mailed first; an answer or a withdrawal that arrives meanwhile is kept by the handlers above.
  if (input.mail) {
    try {
      await mailInvite({ inviteId: input.inviteId });
    } catch (err) {
      const error = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
      await recordInviteMailFailure({ inviteId: input.inviteId, error });
    }
  }

  const remainingMs = Math.max(0, Date.parse(input.expiresAt) - Date.now());
  const answered = await condition(() => response !== undefined || withdrawn, remainingMs);
  if (withdrawn) return 'WITHDRAWN';
  if (!answered) return expireInvite({ inviteId: input.inviteId });
  return applyInviteResponse({ inviteId: input.inviteId, response: response!.response });
}

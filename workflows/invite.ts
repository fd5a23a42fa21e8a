import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { InviteOutcome } from '../activities/invites';

export interface InviteWorkflowInput {
  inviteId: string;
  organizationId: string;
  /** ISO timestamp; the invite expires then unless answered. */
  expiresAt: string;
}

export interface InviteResponseSignal {
  response: 'ACCEPTED' | 'REJECTED';
  /** Who answered (user id or API key id), for the history. */
  respondedBy: string;
}

export const respondSignal = defineSignal<[InviteResponseSignal]>('respond');
/** The invite was deleted: stop waiting. */
export const withdrawSignal = defineSignal('withdraw');

const { applyInviteResponse, expireInvite } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/** An invite is PENDING until answered (signal) or until its expiry timer fires. */
export async function inviteWorkflow(input: InviteWorkflowInput): Promise<InviteOutcome | 'WITHDRAWN'> {
  let response: InviteResponseSignal | undefined;
  let withdrawn = false;
  setHandler(respondSignal, (r) => {
    response ??= r;
  });
  setHandler(withdrawSignal, () => {
    withdrawn = true;
  });

  const remainingMs = Math.max(0, Date.parse(input.expiresAt) - Date.now());
  const answered = await condition(() => response !== undefined || withdrawn, remainingMs);
  if (withdrawn) return 'WITHDRAWN';
  if (!answered) return expireInvite({ inviteId: input.inviteId });
  return applyInviteResponse({ inviteId: input.inviteId, response: response!.response });
}

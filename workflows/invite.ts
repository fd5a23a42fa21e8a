import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  type InviteInput,
  type InviteOutcome,
  type InviteResponseSignal,
  respondSignal,
  withdrawSignal,
} from '../src/temporal/contracts';
import { STATUS_WRITES } from './run-scope';

const { applyInviteResponse, expireInvite } = proxyActivities<Activities>(STATUS_WRITES);

/** An invite is PENDING until answered (signal) or until its expiry timer fires. */
export async function inviteWorkflow(input: InviteInput): Promise<InviteOutcome | 'WITHDRAWN'> {
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

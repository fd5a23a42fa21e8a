// The contract of waitpoints between the api and the assistant run workflow (docs/waitpoints.md), re-exported by
// contracts.ts: the signal that completes one, and what the workflow's approval activities answer.
import { defineSignal } from '@temporalio/workflow';

/** A person (or a callback URL) completed a waitpoint the run waits on (docs/waitpoints.md). */
export interface WaitpointCompletedSignal {
  waitpointId: string;
  approved: boolean;
  /** The arguments the approved call runs with instead of the model's. */
  arguments?: Record<string, unknown>;
  reason?: string;
  /** User id or API key id, or `callback` for the signed callback URL. */
  completedBy: string;
}

/** What an assistant run waits for, for a call of a tool that requires approval: its waitpoint and how long. */
export interface OpenedApproval {
  waitpointId: string;
  timeoutSeconds: number;
  /** Its tool names an approval webhook: the run posts the waitpoint there (notifyApproval). */
  notify?: true;
}

/** Attempts of notifyApproval: the last one records that the webhook could not be reached, instead of failing. */
export const APPROVAL_NOTIFY_ATTEMPTS = 5;

/** What the run does with such a call: run it (with these arguments, when given), or tell the model why not. */
export interface ApprovalDecision {
  approved: boolean;
  arguments?: Record<string, unknown>;
  /** Why it was refused, in words the model reads. */
  refusal?: string;
}

/** Sent by the api's CompleteWaitpoint to the waiting run's workflow; the first for a waitpoint wins. */
export const waitpointCompletedSignal = defineSignal<[WaitpointCompletedSignal]>('waitpointCompleted');

// Notifications of calls waiting for approval (docs/waitpoints.md#notifications): when the tool names an approval
// webhook, the assistant run posts the waitpoint there, with its callback URL, so that an outside system (a chat
// app) can ask a person and complete it. Each post is signed with the value of the webhook's secret, as Slack signs
// its requests (X-Tarmac-Signature: v0=hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)), with
// X-Tarmac-Request-Timestamp), goes through the outbound address policy (a refused address is not asked again),
// and is retried by its activity; the run's events say how it went. A receiver may get a post twice (a retry after a lost answer): X-Tarmac-Waitpoint-Id
// names what it is about.
import type { DataSource } from 'typeorm';
import { guardedFetch } from '../../drivers/http/guarded-fetch';
import { CodeResource } from '../../persistence/entities/code-resource';
import { Waitpoint, type ToolApprovalSubject } from '../../persistence/entities/waitpoint';
import { OutboundRefused, type OutboundPolicy } from '../../security/outbound-policy';
import type { SecretBox } from '../../security/secret-box';
import { appendEvents } from '../code/runs/state';
import { resolveEnvVars } from '../code/runs/execution';
import { chatappSignature } from '../integrations/signatures';
import { callbackUrl } from './waitpoints';

/** How long one post may take, and how much of its answer is read. */
const POST_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024;

export interface NotifyDeps {
  ds: DataSource;
  box: SecretBox;
  policy: OutboundPolicy;
  publicBaseUrl: string;
}

/** The signature headers of `body` with `secret` (at `timestamp`, epoch seconds). */
export const approvalSignatureHeaders = (secret: string, timestamp: number, body: string) => ({
  'x-tarmac-request-timestamp': String(timestamp),
  'x-tarmac-signature': chatappSignature(secret, String(timestamp), Buffer.from(body)),
});

/**
 * Posts the waitpoint to its tool's approval webhook. Throws when the webhook did not take it (the activity is
 * retried), except on the `last` attempt, which records WaitpointNotificationFailed instead. Nothing to do once
 * the waitpoint no longer waits.
 */
export async function notifyApproval(
  deps: NotifyDeps,
  input: { runId: string; waitpointId: string },
  opts: { last: boolean; signal: AbortSignal },
): Promise<void> {
  const w = await deps.ds.getRepository(Waitpoint).findOneBy({ waitpoint_id: input.waitpointId });
  if (!w || w.status !== 'WAITING') return;
  const subject = w.subject as ToolApprovalSubject;
  const tool = await deps.ds.getRepository(CodeResource).findOneBy({ resource_id: subject.tool_id });
  const webhook = tool?.approval_webhook;
  if (!webhook) return;
  let status: number | undefined;
  try {
    const [secret] = await resolveEnvVars(
      deps.ds,
      deps.box,
      w.organization_id,
      [{ name: 'approval_webhook.secret_id', value: webhook.secret_id, source: 'secret_ref' }],
      'Setting',
    );
    const body = JSON.stringify({
      type: 'waitpoint.waiting',
      waitpoint: {
        waitpoint_id: w.waitpoint_id,
        kind: w.kind,
        run_id: w.run_id,
        subject: w.subject,
        timeout_seconds: w.timeout_seconds,
        expires_at: w.expires_at.toISOString(),
      },
      callback_url: callbackUrl(deps.box, deps.publicBaseUrl, w),
    });
    const url = new URL(webhook.url);
    const http = guardedFetch(url, { policy: deps.policy, maxBytes: MAX_ANSWER_BYTES });
    try {
      const answer = await http.fetch(url, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'x-tarmac-waitpoint-id': w.waitpoint_id,
          ...approvalSignatureHeaders(secret.value, Math.floor(Date.now() / 1000), body),
        },
        signal: AbortSignal.any([opts.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]),
      });
      status = answer.status;
      await answer.arrayBuffer().catch(() => undefined);
    } finally {
      await http.close().catch(() => undefined);
    }
    if (status < 200 || status >= 300) throw new Error(`The approval webhook answered ${status}`);
  } catch (err) {
    if (opts.signal.aborted) throw err;
    const refused = refusalOf(err);
    const message = refused?.message ?? (err instanceof Error ? err.message : String(err));
    // A refused address stays refused: asking again changes nothing.
    if (!opts.last && !refused) throw err;
    await appendEvents(deps.ds.manager, input.runId, [
      {
        type: 'WaitpointNotificationFailed',
        origin: 'SYSTEM',
        payload: { waitpoint_id: w.waitpoint_id, url: webhook.url, error: message },
      },
    ]);
    return;
  }
  await appendEvents(deps.ds.manager, input.runId, [
    {
      type: 'WaitpointNotified',
      origin: 'SYSTEM',
      payload: { waitpoint_id: w.waitpoint_id, url: webhook.url, status },
    },
  ]);
}

/** The outbound policy's refusal behind `err` (fetch wraps it as the cause of its TypeError), if it is one. */
function refusalOf(err: unknown): OutboundRefused | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof OutboundRefused) return e;
  return undefined;
}

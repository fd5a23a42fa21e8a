// Request signatures of the outside senders, verified over the raw body with constant-time comparisons.
//   chatapp (Slack's v0 scheme): X-Slack-Signature = "v0=" + hex(HMAC-SHA256(signing secret, "v0:" + ts + ":" + body)),
//     X-Slack-Request-Timestamp = ts (epoch seconds); a ts more than 5 minutes from now is a replay.
//   codehost_app (GitHub's scheme): X-Hub-Signature-256 = "sha256=" + hex(HMAC-SHA256(webhook secret, body)).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's window: a signed request older (or newer) than this is refused as a replay. */
export const CHATAPP_MAX_AGE_SECONDS = 300;

const sameHex = (given: string, expected: string) => {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
};

export const chatappSignature = (secret: string, timestamp: string, body: Buffer) =>
  `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex')}`;

export const codehostSignature = (secret: string, body: Buffer) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export type SignatureVerdict = 'ok' | 'bad_signature' | 'replayed';

export function verifyChatapp(
  secret: string,
  headers: { signature?: string; timestamp?: string },
  body: Buffer,
  nowSeconds = Date.now() / 1000,
): SignatureVerdict {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp || !/^\d{1,12}$/.test(timestamp)) return 'bad_signature';
  // The signature first: an unsigned request is a bad signature whatever its timestamp says.
  if (!sameHex(signature, chatappSignature(secret, timestamp, body))) return 'bad_signature';
  return Math.abs(nowSeconds - Number(timestamp)) > CHATAPP_MAX_AGE_SECONDS ? 'replayed' : 'ok';
}

export function verifyCodehost(secret: string, signature: string | undefined, body: Buffer): SignatureVerdict {
  return signature && sameHex(signature, codehostSignature(secret, body)) ? 'ok' : 'bad_signature';
}

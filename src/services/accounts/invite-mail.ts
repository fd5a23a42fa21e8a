// Invites by mail (docs/people.md#invites): the invite workflow's first step when SMTP_URL is set. Each attempt
// makes the invite's link anew (a fresh token, its hash stored on the invite) and sends it through nodemailer,
// so the raw token is never in the workflow's history; a retry after a send whose end was lost mails a second
// link, and only the last one works. An invite no longer PENDING is not mailed.
import nodemailer, { type Transporter } from 'nodemailer';
import type { DataSource } from 'typeorm';
import { hashSecretToken, newSecretToken } from '../../security/secret-tokens';
import { inviteLink } from './invites';

export interface MailSettings {
  smtpUrl: string;
  from: string;
}

const transports = new Map<string, Transporter>();
function transportFor(smtpUrl: string): Transporter {
  let t = transports.get(smtpUrl);
  if (!t) {
    t = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    transports.set(smtpUrl, t);
  }
  return t;
}

export async function mailInviteLink(
  deps: { ds: DataSource; mail: MailSettings; publicBaseUrl: string },
  inviteId: string,
): Promise<'SENT' | 'NOT_PENDING'> {
  const token = newSecretToken();
  const [, updated] = (await deps.ds.query(
    `UPDATE invites SET link_token_hash = $2, updated_at = now()
      WHERE invite_id = $1 AND status = 'PENDING' AND expires_at > now()`,
    [inviteId, hashSecretToken(token)],
  )) as [unknown, number];
  if (!updated) return 'NOT_PENDING';
  const [invite]: Array<{ email: string; expires_at: Date; organization_name: string }> = await deps.ds.query(
    `SELECT i.email, i.expires_at, o.name AS organization_name
       FROM invites i JOIN organizations o ON o.organization_id = i.organization_id WHERE i.invite_id = $1`,
    [inviteId],
  );
  const link = inviteLink(deps.publicBaseUrl, token);
  await transportFor(deps.mail.smtpUrl).sendMail({
    from: deps.mail.from,
    to: invite.email,
    subject: `You are invited to ${invite.organization_name} on Tarmac`,
    text:
      `You are invited to join ${invite.organization_name} on Tarmac.\n\n` +
      `Follow this link to accept (and choose a password if you have none here yet):\n\n${link}\n\n` +
      `The invite ends ${invite.expires_at.toISOString()}. If you did not expect it, ignore this mail.\n`,
  });
  await deps.ds.query(`UPDATE invites SET mailed_at = now(), mail_error = NULL WHERE invite_id = $1`, [inviteId]);
  return 'SENT';
}

/** Records that the mail was given up after its retries (the invite stays answerable from ListUserInvites). */
export async function recordInviteMailFailure(ds: DataSource, inviteId: string, error: string): Promise<void> {
  await ds.query(`UPDATE invites SET mail_error = $2 WHERE invite_id = $1`, [inviteId, error.slice(0, 1000)]);
}

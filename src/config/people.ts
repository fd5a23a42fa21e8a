// People's sign-in (docs/people.md): how long a cookie session lasts, idle and at most, how long a password-reset
// link holds, the rate limits of sign-in attempts (src/security/rate-limit-rules.ts reads them), and how long the
// audit log keeps its events.
import { parseSignInLimits, type SignInLimitRules } from '../security/rate-limit-rules';
import type { EnvReader } from './env';

export interface PeopleSettings {
  sessions: {
    /** A session not used for this long ends (each use moves the end forward). */
    idleTimeoutSeconds: number;
    /** A session ends this long after its sign-in, however much it is used. */
    maxAgeSeconds: number;
  };
  /** How long a password-reset link (the first start's, `npm run admin -- reset-password`) can be used. */
  passwordResetTtlSeconds: number;
  /** The buckets of sign-in attempts; undefined: not limited (SIGN_IN_RATE_LIMITS=off). */
  signInLimits: SignInLimitRules | undefined;
  /** How long an audit event is kept (AUDIT_RETENTION_DAYS); the reconciler deletes older ones. */
  auditRetentionDays: number;
  /** Where invites are mailed through (SMTP_URL, MAIL_FROM); undefined: no mail, the inviter passes the link on. */
  mail: { smtpUrl: string; from: string } | undefined;
}

export function readPeople(env: EnvReader): PeopleSettings {
  const maxAgeSeconds = env.int('SESSION_MAX_AGE_SECONDS', 7 * 86_400, 1, 400 * 86_400);
  const idleTimeoutSeconds = env.int('SESSION_IDLE_TIMEOUT_SECONDS', 12 * 3600, 1, 400 * 86_400);
  return {
    sessions: { idleTimeoutSeconds: Math.min(idleTimeoutSeconds, maxAgeSeconds), maxAgeSeconds },
    passwordResetTtlSeconds: env.int('PASSWORD_RESET_TTL_SECONDS', 24 * 3600, 60, 30 * 86_400),
    signInLimits: parseSignInLimits(env.optional('SIGN_IN_RATE_LIMITS'), env.problems),
    auditRetentionDays: env.int('AUDIT_RETENTION_DAYS', 400, 1, 100 * 365),
    mail: readMail(env),
  };
}

/** SMTP_URL: smtp://[user:password@]host[:port] (STARTTLS when offered) or smtps:// (TLS from the start). */
function readMail(env: EnvReader): PeopleSettings['mail'] {
  const smtpUrl = env.optional('SMTP_URL');
  if (!smtpUrl) return undefined;
  let protocol = '';
  try {
    protocol = new URL(smtpUrl).protocol;
  } catch {
    // reported below
  }
  if (protocol !== 'smtp:' && protocol !== 'smtps:') {
    env.problems.push('SMTP_URL must be smtp://[user:password@]host[:port] or smtps://...');
    return undefined;
  }
  return { smtpUrl, from: env.string('MAIL_FROM', 'Tarmac <tarmac@localhost>') };
}

// People's sign-in (docs/people.md): how long a cookie session lasts, idle and at most, how long a password-reset
// link holds, the rate limits of sign-in attempts (src/security/rate-limit-rules.ts reads them), and how long the
// audit log keeps its events, where invites are mailed through, and the OIDC provider people may sign in with.
import { ROLES, type Role } from '../persistence/entities/user';
import { parseSignInLimits, type SignInLimitRules } from '../security/rate-limit-rules';
import type { EnvReader } from './env';

/** Sign-in through an OpenID Connect provider (docs/people.md#oidc-sign-in). */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the sign-in button says: "Sign in with <name>". */
  name: string;
  /** Email domains whose people may sign up (a first sign-in makes their user); others must exist already. */
  signupDomains: string[];
  /** The role a sign-up gets in the installation's first organization. */
  signupRole: Role;
}

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
  /** OIDC_ISSUER and its client; undefined: password sign-in only. */
  oidc: OidcSettings | undefined;
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
    oidc: readOidc(env),
  };
}

/** OIDC_ISSUER with OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, all three or none. */
function readOidc(env: EnvReader): OidcSettings | undefined {
  const issuer = env.optional('OIDC_ISSUER');
  const clientId = env.optional('OIDC_CLIENT_ID');
  const clientSecret = env.optional('OIDC_CLIENT_SECRET');
  if (!issuer && !clientId && !clientSecret) return undefined;
  if (!issuer || !clientId || !clientSecret) {
    env.problems.push('OIDC sign-in needs all three of OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET');
    return undefined;
  }
  let url: URL | undefined;
  try {
    url = new URL(issuer);
  } catch {
    // reported below
  }
  // Plain http only to this machine (a provider beside the api, as the tests start one).
  const loopback = url !== undefined && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (!url || !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback))) {
    env.problems.push(`OIDC_ISSUER must be an https:// URL (http:// only on localhost): ${issuer}`);
    return undefined;
  }
  const signupRole = env.string('OIDC_SIGNUP_ROLE', 'member') as Role;
  if (!ROLES.includes(signupRole)) env.problems.push(`OIDC_SIGNUP_ROLE must be one of ${ROLES.join(', ')}`);
  return {
    issuer,
    clientId,
    clientSecret,
    name: env.string('OIDC_NAME', 'SSO'),
    signupDomains: env.list('OIDC_SIGNUP_DOMAINS').map((d) => d.toLowerCase()),
    signupRole: ROLES.includes(signupRole) ? signupRole : 'member',
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

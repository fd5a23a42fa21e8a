// A person's session on the wire (docs/people.md#sessions): the HttpOnly session cookie, the CSRF cookie the
// page reads and echoes in X-CSRF-Token (double submit, checked against the session's own CSRF hash too, so a
// cookie planted by a sibling site does not pass), and the client address sign-in attempts are counted by.
import type { Context } from 'koa';
import type { Deps } from '../deps';
import { forbidden, unauthorized } from '../../errors';
import { findActiveSession, type SessionView, type SignedIn } from '../../services/accounts/sessions';
import type { Caller } from '../../services/caller';
import type { PendingOidcSignIn } from '../../services/accounts/oidc';
import { hashSecretToken, sameToken } from '../../security/secret-tokens';

export const SESSION_COOKIE = 'tarmac_session';
export const CSRF_COOKIE = 'tarmac_csrf';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cookies are Secure when the request came over HTTPS (the api trusts X-Forwarded-Proto from the proxy in front
 * of it, docs/production.md) or when the api's public URL is https: a TLS proxy that does not say so still gets them.
 */
function secureFor(ctx: Context, deps: Deps): boolean {
  return ctx.secure || deps.config.publicBaseUrl.startsWith('https:');
}

function setCookie(ctx: Context, deps: Deps, name: string, value: string, maxAgeMs: number, httpOnly: boolean) {
  const secure = secureFor(ctx, deps);
  // The cookies package refuses a Secure cookie on a connection it thinks is plain (a TLS proxy that sets no header).
  ctx.cookies.secure = secure;
  ctx.cookies.set(name, value, { httpOnly, sameSite: 'lax', secure, path: '/', maxAge: maxAgeMs, overwrite: true });
}

/** The two cookies of a new session, kept by the browser until the session's absolute end. */
export function setSessionCookies(ctx: Context, deps: Deps, signedIn: SignedIn): void {
  const maxAgeMs = Math.max(0, signedIn.session.expiresAt.getTime() - Date.now());
  setCookie(ctx, deps, SESSION_COOKIE, signedIn.token, maxAgeMs, true);
  setCookie(ctx, deps, CSRF_COOKIE, signedIn.csrfToken, maxAgeMs, false);
}

/** Tells the browser to forget both cookies (sign-out, or a session that ended). */
export function clearSessionCookies(ctx: Context, deps: Deps): void {
  const secure = secureFor(ctx, deps);
  ctx.cookies.secure = secure;
  for (const name of [SESSION_COOKIE, CSRF_COOKIE]) {
    ctx.cookies.set(name, '', { httpOnly: name === SESSION_COOKIE, sameSite: 'lax', secure, path: '/', maxAge: 0 });
  }
}

/** The session cookie's value, when the request has one. */
export function sessionTokenOf(ctx: Context): string | undefined {
  return ctx.cookies.get(SESSION_COOKIE) || undefined;
}

/**
 * The caller of the request's session cookie. Unsafe methods must carry the session's CSRF token in
 * X-CSRF-Token, equal to the CSRF cookie: else 403, before anything is done.
 */
export async function authenticateSession(ctx: Context, deps: Deps, token: string): Promise<Caller> {
  const session = await findActiveSession(deps.ds, deps.config.sessions, token);
  if (!session) {
    clearSessionCookies(ctx, deps);
    throw unauthorized('The session has ended or is unknown: sign in again (POST /api/sessions)');
  }
  if (!SAFE_METHODS.has(ctx.method)) {
    const header = ctx.get(CSRF_HEADER);
    const cookie = ctx.cookies.get(CSRF_COOKIE) ?? '';
    if (!header || !sameToken(header, cookie) || !hashSecretToken(header).equals(session.csrfHash)) {
      throw forbidden(
        `A ${ctx.method} authenticated by the session cookie needs the ${CSRF_COOKIE} cookie's value in the ` +
          'X-CSRF-Token header (or an API key instead of the cookie)',
      );
    }
  }
  (ctx.state as SessionState).session = session.view;
  return session.caller;
}

interface SessionState {
  session?: SessionView;
}

/** The session that authenticated this request (GET /api/sessions/current), if a session did. */
export function sessionOfRequest(ctx: Context): SessionView | undefined {
  return (ctx.state as SessionState).session;
}

/**
 * The address sign-in attempts are counted by: the last X-Forwarded-For entry, the one the proxy in front of the
 * api added (entries before it are what the client claimed), else the connection's peer.
 */
export function clientAddress(ctx: Context): string {
  const forwarded = ctx.get('x-forwarded-for');
  const last = forwarded.split(',').pop()?.trim();
  return last || ctx.req.socket.remoteAddress || 'unknown';
}

/** Between an OIDC sign-in's start and its callback: what the callback checks, sealed (SECRETS_KEY). */
const OIDC_COOKIE = 'tarmac_oidc';
const OIDC_COOKIE_PATH = '/api/sessions/oidc';
/** How long a person has at the provider to sign in. */
const OIDC_PENDING_MS = 10 * 60_000;
const OIDC_SEAL = 'oidc-sign-in';

/**
 * Sealed, so that no one can plant a cookie of their own making (a sibling site) and sign the browser in as
 * themselves with a code of theirs; SameSite=Lax, so that the provider's redirect back carries it.
 */
export function setPendingOidc(ctx: Context, deps: Deps, pending: PendingOidcSignIn): void {
  const sealed = deps.box.seal(JSON.stringify({ ...pending, until: Date.now() + OIDC_PENDING_MS }), OIDC_SEAL);
  const secure = secureFor(ctx, deps);
  ctx.cookies.secure = secure;
  ctx.cookies.set(OIDC_COOKIE, sealed.toString('base64url'), {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: OIDC_COOKIE_PATH,
    maxAge: OIDC_PENDING_MS,
    overwrite: true,
  });
}

/** The pending sign-in this browser started (and forgets it: a callback is used once), or undefined. */
export function takePendingOidc(ctx: Context, deps: Deps): PendingOidcSignIn | undefined {
  const raw = ctx.cookies.get(OIDC_COOKIE);
  const secure = secureFor(ctx, deps);
  ctx.cookies.secure = secure;
  ctx.cookies.set(OIDC_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure, path: OIDC_COOKIE_PATH, maxAge: 0 });
  if (!raw) return undefined;
  try {
    const pending = JSON.parse(deps.box.open(Buffer.from(raw, 'base64url'), OIDC_SEAL)) as PendingOidcSignIn & {
      until: number;
    };
    return pending.until > Date.now() ? pending : undefined;
  } catch {
    return undefined; // not ours
  }
}

// Sign-in through an OpenID Connect provider (docs/people.md#oidc-sign-in): the authorization code flow with
// PKCE, through openid-client. The start makes the provider's URL and what the callback must check (state, nonce,
// the PKCE verifier), which the browser keeps in a short-lived cookie; the callback exchanges the code, checks the
// ID token and finds the user: by the provider's account when it signed in before, else by a verified email,
// else, for an email domain the operator lets sign up, a new user who joins the installation's first
// organization. A sign-in started from an invite's link accepts that invite first (the provider's verified email
// must be the invite's), so a new person joins by it. Anyone else is refused.
import * as oidc from 'openid-client';
import type { DataSource } from 'typeorm';
import type { OidcSettings } from '../../config/people';
import { forbidden, HttpError } from '../../errors';
import type { Client } from '@temporalio/client';
import { addMember, upsertUserByEmail } from './accounts';
import { acceptInviteByVerifiedEmail } from './invites';

/** What the callback checks, kept by the browser between the start and the callback. */
export interface PendingOidcSignIn {
  state: string;
  nonce: string;
  verifier: string;
  /** The console page to land on. */
  returnTo: string;
  /** The invite link's token, when the sign-in accepts that invite. */
  inviteToken?: string;
}

const discovered = new Map<string, Promise<oidc.Configuration>>();

/** The provider's configuration (its discovery document), read once per process; a failed read is tried again. */
function providerOf(settings: OidcSettings): Promise<oidc.Configuration> {
  let config = discovered.get(settings.issuer);
  if (!config) {
    const insecure = new URL(settings.issuer).protocol === 'http:'; // loopback only (src/config/people.ts)
    config = oidc
      .discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
        timeout: 10,
      })
      .catch((err: unknown) => {
        discovered.delete(settings.issuer);
        throw new HttpError(503, 'ServiceUnavailableError', [
          { message: `The OIDC provider ${settings.issuer} cannot be reached: ${(err as Error).message}` },
        ]);
      });
    discovered.set(settings.issuer, config);
  }
  return config;
}

/** The provider's authorization URL for a new sign-in, and what its callback must check. */
export async function beginOidcSignIn(
  settings: OidcSettings,
  redirectUri: string,
  opts: { returnTo: string; inviteToken?: string },
): Promise<{ url: string; pending: PendingOidcSignIn }> {
  const config = await providerOf(settings);
  const pending = {
    state: oidc.randomState(),
    nonce: oidc.randomNonce(),
    verifier: oidc.randomPKCECodeVerifier(),
    ...opts,
  };
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, pending };
}

/** Why a callback is refused: the provider said no, or what came back does not match what was sent. */
export const oidcRefused = (message: string) => new HttpError(400, 'ValidationError', [{ message }]);

/**
 * The user the provider's answer (the callback's URL) signs in, and the organization of the invite it accepted;
 * refused when it names no one allowed here.
 */
export async function completeOidcSignIn(
  deps: { ds: DataSource; temporal: Client },
  settings: OidcSettings,
  callbackUrl: URL,
  pending: PendingOidcSignIn | undefined,
): Promise<{ userId: string; email: string; organizationId?: string }> {
  const providerError = callbackUrl.searchParams.get('error');
  if (providerError) {
    const description = callbackUrl.searchParams.get('error_description');
    throw oidcRefused(
      `The OIDC provider refused the sign-in: ${providerError}${description ? ` (${description})` : ''}`,
    );
  }
  if (!pending) throw oidcRefused('This sign-in was not started in this browser, or took too long: start again');
  const config = await providerOf(settings);
  let claims: Claims;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const idToken = tokens.claims()!; // idTokenExpected: there is one
    // A conforming provider may leave the scopes' claims to its userinfo endpoint (the ID token then has `sub`).
    claims =
      idToken.email === undefined
        ? { ...(await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub)), sub: idToken.sub }
        : idToken;
  } catch (err) {
    throw oidcRefused(`The OIDC sign-in could not be completed: ${(err as Error).message}`);
  }
  if (!pending.inviteToken) return userOfClaims(deps.ds, settings, claims);
  const email = verifiedEmailOf(claims);
  // The invite's workflow makes the user (if new) and the membership; the provider account is linked below.
  const invite = await acceptInviteByVerifiedEmail(deps, pending.inviteToken, email);
  return { ...(await userOfClaims(deps.ds, settings, claims)), organizationId: invite.organization_id };
}

/** A first sign-in with an account: only a verified email says whose it is. */
function verifiedEmailOf(claims: Claims): string {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : undefined;
  if (!email || claims.email_verified !== true) {
    throw forbidden('The OIDC provider gave no verified email for this account: it cannot be matched to a user here');
  }
  return email;
}

type Claims = { sub: string; email?: unknown; email_verified?: unknown; name?: unknown };

async function userOfClaims(ds: DataSource, settings: OidcSettings, claims: Claims) {
  const subject = claims.sub;
  return ds.transaction(async (em) => {
    const known: Array<{ user_id: string; email: string }> = await em.query(
      `SELECT i.user_id, u.email FROM user_identities i JOIN users u ON u.user_id = i.user_id
        WHERE i.issuer = $1 AND i.subject = $2`,
      [settings.issuer, subject],
    );
    if (known[0]) {
      await em.query(`UPDATE user_identities SET last_sign_in_at = now() WHERE issuer = $1 AND subject = $2`, [
        settings.issuer,
        subject,
      ]);
      return { userId: known[0].user_id, email: known[0].email };
    }

    const email = verifiedEmailOf(claims);
    const existing: Array<{ user_id: string }> = await em.query(`SELECT user_id FROM users WHERE email = $1`, [email]);
    let userId = existing[0]?.user_id;
    if (!userId) {
      const domain = email.split('@').pop() ?? '';
      if (!settings.signupDomains.includes(domain)) {
        throw forbidden(`${email} has no account here, and people of ${domain} may not sign up: ask for an invite`);
      }
      const [first]: Array<{ organization_id: string }> = await em.query(
        `SELECT organization_id FROM organizations ORDER BY created_at, organization_id LIMIT 1`,
      );
      if (!first) throw forbidden('This installation has no organization to join yet');
      const name = typeof claims.name === 'string' ? claims.name : undefined;
      userId = (await upsertUserByEmail(em, email, name)).user_id;
      await addMember(em, first.organization_id, userId, settings.signupRole);
    }
    await em.query(
      `INSERT INTO user_identities (issuer, subject, user_id, email) VALUES ($1, $2, $3, $4)
       ON CONFLICT (issuer, subject) DO NOTHING`,
      [settings.issuer, subject, userId, email],
    );
    return { userId, email };
  });
}

// A person's session (docs/people.md): sign in with email and password (POST /api/sessions, which sets the
// cookies), who is signed in, sign out; and setting a password through a one-time reset link.
import { api, data, errorText } from './client';

export const signInWithPassword = (email: string, password: string) =>
  data(api.POST('/api/sessions', { body: { email, password } }));

/** This browser's session (GET /api/sessions/current: who, in which organization, with which role), or null. */
export async function currentSession() {
  const { data: current, error, response } = await api.GET('/api/sessions/current');
  if (current) return current;
  if (response.status === 401) return null;
  throw new Error(errorText(error));
}

/** Password always; the OIDC provider's name and start when the installation has one. */
export const signInMethods = () => data(api.GET('/api/sign-in-methods'));

/** The provider's URL of a new OIDC sign-in (with an invite's token, one that accepts it first). */
export const beginOidcSignIn = async (body: { invite_token?: string; return_to?: string }) =>
  (await data(api.POST('/api/sessions/oidc', { body }))).authorization_url;

export const signOutSession = () => data(api.DELETE('/api/sessions/current'));

/** Sets the password of the reset link's user; a 404 (a link unknown, used or expired) is said as such. */
export async function setPasswordWithReset(token: string, password: string): Promise<void> {
  const { error, response } = await api.POST('/api/password-resets/{token}', {
    params: { path: { token } },
    body: { password },
  });
  if (response.ok) return;
  if (response.status === 404)
    throw new Error('This link has expired or was already used. Ask your administrator for a new one.');
  throw new Error(errorText(error));
}

/** What an invite link invites to (GET /api/invite-links/{token}); a 404 (unknown or deleted) is said as such. */
export async function readInviteLink(token: string) {
  const {
    data: link,
    error,
    response,
  } = await api.GET('/api/invite-links/{token}', {
    params: { path: { token } },
  });
  if (link) return link;
  if (response.status === 404) throw new Error('This invite link is unknown, or its invite was withdrawn.');
  throw new Error(errorText(error));
}

/** Accepts the link's invite; `password` is set when the person has none yet. */
export const acceptInviteLink = (token: string, password: string | undefined) =>
  data(
    api.POST('/api/invite-links/{token}/acceptance', {
      params: { path: { token } },
      body: password === undefined ? {} : { password },
    }),
  );

// Signing in through the OIDC provider (docs/people.md#oidc-sign-in), and how this installation signs people
// in. A browser goes to the start (a link, or the console's POST when the sign-in accepts an invite: its token
// stays out of every URL), signs in at the provider, and comes back to the callback, which opens a session (the
// same cookies as a password sign-in) and sends it on to the console; a refusal sends it to the console's sign-in
// page with the reason. The callback is audited.
import type { Context } from 'koa';
import type { Deps } from '../deps';
import { beginOidcSignIn, completeOidcSignIn } from '../../services/accounts/oidc';
import { startSession } from '../../services/accounts/sessions';
import { HttpError, notFound } from '../../errors';
import { noteForAudit } from '../http/audit';
import { clientAddress, setPendingOidc, setSessionCookies, takePendingOidc } from '../http/session-cookies';
import { route } from '../http/route';
import { defineSchema } from '../schemas/registry';

const TAG = 'Sessions';
const START_PATH = '/api/sessions/oidc';
const CALLBACK_PATH = '/api/sessions/oidc/callback';
const CONSOLE = '/console/';

function oidcOf(deps: Deps) {
  if (!deps.config.oidc) throw notFound('OIDC sign-in (OIDC_ISSUER is not set)');
  return deps.config.oidc;
}

const redirect = (ctx: Context, to: string) => {
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(to);
  return { status: 303 };
};

route({
  operationId: 'GetSignInMethods',
  method: 'get',
  path: '/sign-in-methods',
  tag: TAG,
  auth: 'none',
  summary: 'How people sign in here: always by password; through the OIDC provider too when OIDC_ISSUER is set.',
  responses: {
    200: {
      description: 'Sign-in methods',
      schema: defineSchema('SignInMethods', {
        type: 'object',
        required: ['password', 'oidc'],
        properties: {
          password: { type: 'boolean', const: true },
          oidc: {
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                required: ['name', 'start_url'],
                properties: {
                  name: { type: 'string', description: 'OIDC_NAME: what the button says ("Sign in with <name>").' },
                  start_url: { type: 'string', description: 'Where a browser goes to sign in (StartOidcSignIn).' },
                },
              },
            ],
          },
        },
      }),
    },
  },
  handler: async ({ deps }) => ({
    status: 200,
    body: { password: true, oidc: deps.config.oidc ? { name: deps.config.oidc.name, start_url: START_PATH } : null },
  }),
});

// Query values are bounded so that the whole request line stays within what the api (and a proxy in front of it)
// reads: 16 KiB, where a character may take 12 bytes percent-encoded.
const returnTo = {
  type: 'string',
  pattern: '^/console(/[^\\s\\\\]*)?$',
  maxLength: 1000,
  description: 'The console page to land on (default /console/).',
} as const;

/** Sets the sealed cookie of a new sign-in and answers the provider's URL to send the browser to. */
async function begin(ctx: Context, deps: Deps, opts: { returnTo?: string; inviteToken?: string }): Promise<string> {
  const settings = oidcOf(deps);
  const callback = new URL(CALLBACK_PATH, deps.config.publicBaseUrl).href;
  const { url, pending } = await beginOidcSignIn(settings, callback, { ...opts, returnTo: opts.returnTo ?? CONSOLE });
  setPendingOidc(ctx, deps, pending);
  return url;
}

route({
  operationId: 'StartOidcSignIn',
  method: 'get',
  path: '/sessions/oidc',
  tag: TAG,
  auth: 'none',
  summary:
    "Sends the browser to the OIDC provider (authorization code with PKCE); it comes back to CompleteOidcSignIn. 404 when OIDC_ISSUER is not set; 503 when the provider's discovery document cannot be read.",
  query: { return_to: returnTo },
  responses: { 303: { description: "To the provider's sign-in" } },
  handler: async ({ ctx, deps, query }) => redirect(ctx, await begin(ctx, deps, { returnTo: query.return_to })),
});

route({
  operationId: 'BeginOidcSignIn',
  method: 'post',
  path: '/sessions/oidc',
  tag: TAG,
  auth: 'none',
  summary:
    "As StartOidcSignIn, for a page that sends the browser on itself: answers the provider's URL. With `invite_token` (an invite link's), the sign-in accepts that invite first; the provider's verified email must be the invite's, and a person new here joins by it.",
  body: defineSchema('BeginOidcSignInRequest', {
    type: 'object',
    additionalProperties: false,
    properties: {
      return_to: returnTo,
      invite_token: { type: 'string', minLength: 1, maxLength: 200, description: "The invite link's token." },
    },
  }),
  responses: {
    200: {
      description: "The provider's URL",
      schema: defineSchema('OidcAuthorization', {
        type: 'object',
        required: ['authorization_url'],
        properties: { authorization_url: { type: 'string' } },
      }),
    },
  },
  handler: async ({ ctx, deps, body }) => {
    ctx.set('Cache-Control', 'no-store');
    const url = await begin(ctx, deps, { returnTo: body.return_to, inviteToken: body.invite_token });
    return { status: 200, body: { authorization_url: url } };
  },
});

route({
  operationId: 'CompleteOidcSignIn',
  method: 'get',
  path: '/sessions/oidc/callback',
  tag: TAG,
  auth: 'none',
  audit: true,
  summary:
    "The OIDC provider's redirect back: checks the answer against what this browser's start sent (state, nonce, PKCE), finds the user (by the provider's account, else a verified email, else a sign-up of an OIDC_SIGNUP_DOMAINS email), sets the session cookies and sends the browser to the console. A refusal sends it to the console's sign-in with the reason in `#oidc_error=`.",
  query: {
    code: { type: 'string', maxLength: 700 },
    state: { type: 'string', maxLength: 100 },
    iss: { type: 'string', maxLength: 150 },
    error: { type: 'string', maxLength: 50 },
    error_description: { type: 'string', maxLength: 200 },
  },
  responses: { 303: { description: 'To the console, signed in, or to its sign-in with the reason' } },
  handler: async ({ ctx, deps }) => {
    const settings = oidcOf(deps);
    const pending = takePendingOidc(ctx, deps);
    // The URL the provider sent the browser to, under the public base URL it was given.
    const callbackUrl = new URL(`${CALLBACK_PATH}${ctx.search}`, deps.config.publicBaseUrl);
    try {
      const { userId, email, organizationId } = await completeOidcSignIn(deps, settings, callbackUrl, pending);
      noteForAudit(ctx, { userId, detail: { email, issuer: settings.issuer } });
      // In the organization of the invite it accepted, else the user's oldest.
      const signedIn = await startSession(deps.ds, deps.config.sessions, {
        userId,
        organizationId,
        address: clientAddress(ctx),
      });
      noteForAudit(ctx, { organizationId: signedIn.session.organizationId });
      setSessionCookies(ctx, deps, signedIn);
      return redirect(ctx, pending?.returnTo ?? CONSOLE);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      const reason = err.errors[0]?.message ?? err.type;
      noteForAudit(ctx, { status: err.status, detail: { issuer: settings.issuer, refused: reason } });
      return redirect(ctx, `${CONSOLE}#oidc_error=${encodeURIComponent(reason)}`);
    }
  },
});

// Signing in through the OIDC provider (docs/people.md#oidc-sign-in), and how this installation signs people
// in. A browser goes to the start, signs in at the provider, and comes back to the callback, which opens a
// session (the same cookies as a password sign-in) and sends it on to the console; a refusal sends it to the
// console's sign-in page with the reason. Both are audited.
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

route({
  operationId: 'StartOidcSignIn',
  method: 'get',
  path: '/sessions/oidc',
  tag: TAG,
  auth: 'none',
  summary:
    "Sends the browser to the OIDC provider (authorization code with PKCE); it comes back to CompleteOidcSignIn. 404 when OIDC_ISSUER is not set; 503 when the provider's discovery document cannot be read.",
  query: {
    return_to: {
      type: 'string',
      pattern: '^/console(/[^\\s\\\\]*)?$',
      maxLength: 2000,
      description: 'The console page to land on (default /console/).',
    },
  },
  responses: { 303: { description: "To the provider's sign-in" } },
  handler: async ({ ctx, deps, query }) => {
    const settings = oidcOf(deps);
    const callback = new URL(CALLBACK_PATH, deps.config.publicBaseUrl).href;
    const { url, pending } = await beginOidcSignIn(settings, callback, query.return_to ?? CONSOLE);
    setPendingOidc(ctx, deps, pending);
    return redirect(ctx, url);
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
    code: { type: 'string', maxLength: 4000 },
    state: { type: 'string', maxLength: 4000 },
    iss: { type: 'string', maxLength: 2000 },
    error: { type: 'string', maxLength: 200 },
    error_description: { type: 'string', maxLength: 2000 },
  },
  responses: { 303: { description: 'To the console, signed in, or to its sign-in with the reason' } },
  handler: async ({ ctx, deps }) => {
    const settings = oidcOf(deps);
    const pending = takePendingOidc(ctx, deps);
    // The URL the provider sent the browser to, under the public base URL it was given.
    const callbackUrl = new URL(`${CALLBACK_PATH}${ctx.search}`, deps.config.publicBaseUrl);
    try {
      const { userId, email } = await completeOidcSignIn(deps.ds, settings, callbackUrl, pending);
      noteForAudit(ctx, { userId, detail: { email, issuer: settings.issuer } });
      const signedIn = await startSession(deps.ds, deps.config.sessions, { userId, address: clientAddress(ctx) });
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

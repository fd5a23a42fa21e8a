// People's sign-in (docs/people.md): cookie sessions made by email and password, who is signed in, signing out
// of one session or everywhere, and the one-time links that set a password.
import { auditSubjectOf } from '../../services/accounts/audit';
import { noteForAudit } from '../http/audit';
import type { Context } from 'koa';
import { forbidden, HttpError } from '../../errors';
import { iso } from '../../persistence/scoped';
import { organizationsOfUsers } from '../../services/accounts/accounts';
import { setPasswordWithReset } from '../../services/accounts/password-resets';
import { endSession, endUserSessions, signIn, type SessionView } from '../../services/accounts/sessions';
import type { Caller } from '../../services/caller';
import { hashSecretToken } from '../../security/secret-tokens';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../security/passwords';
import type { Deps } from '../deps';
import { takeTokens, type NamedBucket } from '../http/rate-limits';
import { route } from '../http/route';
import { clearSessionCookies, clientAddress, sessionOfRequest, setSessionCookies } from '../http/session-cookies';
import { defineSchema, roleSchema, str, timestamp, uuid } from '../schemas/registry';
import { presentUser, UserSchema } from './accounts';

const TAG = 'Sessions';

const SessionSchema = defineSchema('Session', {
  type: 'object',
  required: ['session_id', 'user', 'organization_id', 'role', 'created_at', 'expires_at', 'idle_expires_at'],
  properties: {
    session_id: uuid,
    user: UserSchema,
    organization_id: { ...uuid, description: 'The organization the session acts in (chosen at sign-in).' },
    role: { ...roleSchema, description: "The user's role there, as of this request (docs/people.md#roles)." },
    created_at: timestamp,
    expires_at: { ...timestamp, description: 'The absolute end: SESSION_MAX_AGE_SECONDS after the sign-in.' },
    idle_expires_at: {
      ...timestamp,
      description: 'When the session ends unless it is used before (SESSION_IDLE_TIMEOUT_SECONDS after its last use).',
    },
  },
});
const SignedInSchema = defineSchema('SignedInSession', {
  allOf: [
    SessionSchema,
    {
      type: 'object',
      required: ['csrf_token'],
      properties: {
        csrf_token: {
          type: 'string',
          description:
            'Also in the tarmac_csrf cookie: send it as X-CSRF-Token with every POST, PUT, PATCH and DELETE.',
        },
      },
    },
  ],
});
const CreateSessionBody = defineSchema('CreateSessionRequest', {
  type: 'object',
  required: ['email', 'password'],
  additionalProperties: false,
  properties: {
    email: str(1, 254),
    password: str(1, PASSWORD_MAX_LENGTH),
    organization_id: {
      ...uuid,
      description: "The organization to act in (the user must be a member); default: the user's oldest membership.",
    },
  },
});
const SetPasswordBody = defineSchema('SetPasswordRequest', {
  type: 'object',
  required: ['password'],
  additionalProperties: false,
  properties: {
    password: {
      ...str(PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH),
      description: `The new password: ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
    },
  },
});
const resetToken = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{43}$',
  description: "a password-reset link's token (43 characters of base64url, after #token= in the link)",
} as const;

async function presentSession(deps: Deps, session: SessionView) {
  const organizations = await organizationsOfUsers(deps.ds, [session.user.user_id]);
  return {
    session_id: session.sessionId,
    user: presentUser(session.user, organizations.get(session.user.user_id)!),
    organization_id: session.organizationId,
    role: session.role,
    created_at: iso(session.createdAt),
    expires_at: iso(session.expiresAt),
    idle_expires_at: iso(session.idleExpiresAt),
  };
}

/** Sign-in attempts take a token of the client address's bucket and of the account's (the email tried). */
function signInBuckets(deps: Deps, address: string, email: string): NamedBucket[] {
  const rules = deps.config.signInLimits ?? {};
  const account = hashSecretToken(email.trim().toLowerCase()).toString('hex');
  return [
    ...(rules.address
      ? [
          {
            bucket: 'sign_in_address',
            name: `sign-in-address:${address}`,
            rule: rules.address,
            description: "client address's sign-in attempts",
          },
        ]
      : []),
    ...(rules.account
      ? [
          {
            bucket: 'sign_in_account',
            name: `sign-in-account:${account}`,
            rule: rules.account,
            description: "account's sign-in attempts",
          },
        ]
      : []),
  ];
}

const noStore = (ctx: Context) => ctx.set('Cache-Control', 'no-store');

function sessionOf(ctx: Context, caller: Caller): SessionView {
  const session = caller.sessionId ? sessionOfRequest(ctx) : undefined;
  if (!session)
    throw new HttpError(404, 'NotFoundError', [
      { message: 'This request has no session: it is authenticated by an API key, not the session cookie' },
    ]);
  return session;
}

route({
  operationId: 'CreateSession',
  method: 'post',
  path: '/sessions',
  tag: TAG,
  audit: (b) => ({ email: b.email }),
  auth: 'none',
  summary:
    'Signs a person in by email and password: sets the HttpOnly session cookie (tarmac_session) and the CSRF cookie (tarmac_csrf). 401 for a wrong email or password alike; 429 past SIGN_IN_RATE_LIMITS.',
  body: CreateSessionBody,
  bodyRequired: true,
  responses: { 201: { description: 'Signed in', schema: SignedInSchema } },
  handler: async ({ ctx, deps, body }) => {
    noStore(ctx);
    const address = clientAddress(ctx);
    // Audited either way: a refusal (429 too) under the account it tried, when the email is known here.
    noteForAudit(ctx, await auditSubjectOf(deps.ds, { email: body.email }));
    await takeTokens(deps.ds, ctx, signInBuckets(deps, address, body.email));
    const signedIn = await signIn(deps.ds, deps.config.sessions, {
      email: body.email,
      password: body.password,
      organizationId: body.organization_id,
      address,
    });
    noteForAudit(ctx, { organizationId: signedIn.session.organizationId, userId: signedIn.session.user.user_id });
    setSessionCookies(ctx, deps, signedIn);
    return { status: 201, body: { ...(await presentSession(deps, signedIn.session)), csrf_token: signedIn.csrfToken } };
  },
});

route({
  operationId: 'GetCurrentSession',
  method: 'get',
  path: '/sessions/current',
  tag: TAG,
  summary: "Who is signed in: the session cookie's session. 401 without one; 404 for a request made with an API key.",
  responses: { 200: { description: 'The session', schema: SessionSchema } },
  handler: async ({ ctx, deps, caller }) => {
    noStore(ctx);
    return { status: 200, body: await presentSession(deps, sessionOf(ctx, caller)) };
  },
});

route({
  operationId: 'DeleteCurrentSession',
  method: 'delete',
  path: '/sessions/current',
  tag: TAG,
  summary: 'Signs out: ends the session of the cookie and clears both cookies. Needs X-CSRF-Token.',
  responses: { 204: { description: 'Signed out' } },
  handler: async ({ ctx, deps, caller }) => {
    await endSession(deps.ds, sessionOf(ctx, caller).sessionId);
    clearSessionCookies(ctx, deps);
    return { status: 204 };
  },
});

route({
  operationId: 'DeleteSessions',
  method: 'delete',
  path: '/sessions',
  tag: TAG,
  summary:
    "Signs out everywhere: ends every session of the caller's user, in every organization (a user's API key may too). 403 for an organization key.",
  responses: { 204: { description: 'Every session ended' } },
  handler: async ({ ctx, deps, caller }) => {
    if (!caller.userId) throw forbidden('An organization key has no user, so no sessions');
    await endUserSessions(deps.ds, caller.userId);
    if (caller.sessionId) clearSessionCookies(ctx, deps);
    return { status: 204 };
  },
});

route({
  operationId: 'SetPasswordWithReset',
  method: 'post',
  path: '/password-resets/{token}',
  tag: TAG,
  audit: true,
  auth: 'none',
  summary: `Sets the password of a one-time password-reset link's user (${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters) and ends all their sessions. 404 for a link unknown, used or expired.`,
  params: { token: resetToken },
  body: SetPasswordBody,
  bodyRequired: true,
  responses: { 204: { description: 'Password set; sign in with it (POST /api/sessions)' } },
  handler: async ({ ctx, deps, params, body }) => {
    noStore(ctx);
    const userId = await setPasswordWithReset(deps.ds, params.token, body.password);
    noteForAudit(ctx, await auditSubjectOf(deps.ds, { userId }));
    return { status: 204 };
  },
});

// People for tests (docs/people.md): a tenant whose user has a password, set the way a person sets one (a reset
// link, POST /api/password-resets/{token}), and a browser-like client that keeps the cookies an api sets and
// sends them back, with the CSRF cookie's value in X-CSRF-Token unless told otherwise.
import { expect } from 'chai';
import { addMember, createApiKey, upsertUserByEmail } from '../../src/services/accounts/accounts';
import { createPasswordReset } from '../../src/services/accounts/password-resets';
import type { Role } from '../../src/services/accounts/roles';
import type { Caller } from '../../src/services/caller';
import { request, type Reply, type RequestOptions } from './client';
import { getStack, newTenant } from './stack';

export const PASSWORD = 'correct horse battery staple';

/** The caller a tenant's own user is, for calling services directly (an owner with its user key). */
export const ownerCaller = (t: { organizationId: string; userId: string }): Caller => ({
  organizationId: t.organizationId,
  userId: t.userId,
  apiKeyId: t.userId,
  actor: t.userId,
  runId: null,
  role: 'owner',
});

/** A new tenant (organization, user, user key) whose user has PASSWORD, set through a reset link. */
export async function personWithPassword(label = 'person', password = PASSWORD) {
  const tenant = await newTenant(label);
  await setPasswordOf(tenant.userId, password);
  return { ...tenant, password };
}

/** Sets a user's password through a fresh reset link, over HTTP. */
export async function setPasswordOf(userId: string, password: string, baseUrl = getStack().baseUrl) {
  const { token } = await createPasswordReset(getStack().ds, userId, 3600);
  const set = await request('POST', `${baseUrl}/api/password-resets/${token}`, { password });
  expect(set.status, set.text).to.equal(204);
}

/** One cookie as the api set it: its value and its attributes, lower-cased. */
export interface SetCookie {
  name: string;
  value: string;
  attributes: Record<string, string | true>;
}

export function setCookiesOf(reply: Reply): SetCookie[] {
  return reply.headers.getSetCookie().map((line) => {
    const [pair, ...attrs] = line.split(';').map((s) => s.trim());
    const at = pair.indexOf('=');
    return {
      name: pair.slice(0, at),
      value: pair.slice(at + 1),
      attributes: Object.fromEntries(
        attrs.map((a) => {
          const eq = a.indexOf('=');
          return eq < 0 ? [a.toLowerCase(), true] : [a.slice(0, eq).toLowerCase(), a.slice(eq + 1)];
        }),
      ),
    };
  });
}

/** A browser's cookie jar for one api: keeps what Set-Cookie says (a Max-Age of 0 deletes). */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl = getStack().baseUrl) {}

  async signIn(email: string, password: string, extra: Record<string, unknown> = {}, opts: RequestOptions = {}) {
    return this.send('POST', '/api/sessions', { email, password, ...extra }, opts);
  }

  get csrf(): string | undefined {
    return this.cookies.get('tarmac_csrf');
  }

  /** `csrf: false` leaves X-CSRF-Token out; a string sends that instead of the cookie's value. */
  async send<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts: RequestOptions & { csrf?: string | false } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    // A Cookie header given is sent instead of the jar's (a planted cookie, a cookie left out).
    if (this.cookies.size && headers.cookie === undefined)
      headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf;
    const reply = await request<T>(method, `${this.baseUrl}${path}`, body, { ...opts, headers });
    for (const cookie of setCookiesOf(reply)) {
      if (cookie.attributes['max-age'] === '0' || cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return reply;
  }

  get = <T = any>(path: string, opts: RequestOptions = {}) => this.send<T>('GET', path, undefined, opts);
  post = <T = any>(path: string, body?: unknown, opts: RequestOptions & { csrf?: string | false } = {}) =>
    this.send<T>('POST', path, body, opts);
  delete = <T = any>(path: string, opts: RequestOptions & { csrf?: string | false } = {}) =>
    this.send<T>('DELETE', path, undefined, opts);
}

/**
 * A new person whose one membership is of `organizationId`, with `role`, and a key of theirs there (set up
 * directly, as an accepted invite leaves them).
 */
export async function memberWithRole(organizationId: string, role: Role, label: string = role) {
  const email = `${label}-${Math.random().toString(36).slice(2, 10)}@example.test`;
  return getStack().ds.transaction(async (em) => {
    const user = await upsertUserByEmail(em, email);
    await addMember(em, organizationId, user.user_id, role);
    const { value } = await createApiKey(em, {
      organizationId,
      userId: user.user_id,
      name: `${role} key`,
      createdBy: user.user_id,
    });
    return { userId: user.user_id, email: user.email, key: value };
  });
}

// People's cookie sessions (docs/people.md#sessions): a sign-in by email and password, the caller a session's
// token stands for, and signing out of one session or of all of a user's. A session acts in one organization,
// chosen at sign-in (the one named, else the user's oldest membership); its row references that membership, so
// a member removed or a user deleted has no session left, at once (nothing caches a session).
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { forbidden, unauthorized } from '../../errors';
import { User } from '../../persistence/entities';
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from '../../security/passwords';
import { hashSecretToken, newSecretToken } from '../../security/secret-tokens';
import type { Caller } from '../caller';
import type { Role } from './roles';

export interface SessionPolicy {
  idleTimeoutSeconds: number;
  maxAgeSeconds: number;
}

/** A session as it is presented: never its tokens. */
export interface SessionView {
  sessionId: string;
  user: User;
  organizationId: string;
  /** The user's role in that organization. */
  role: Role;
  createdAt: Date;
  /** The absolute end. */
  expiresAt: Date;
  /** When it ends if it is not used before (never after expiresAt). */
  idleExpiresAt: Date;
}

/** The answer to a sign-in: the session, and the two tokens that exist only here (the cookies' values). */
export interface SignedIn {
  session: SessionView;
  token: string;
  csrfToken: string;
}

/** One message for an unknown email, a user without a password and a wrong password: it says nothing of which. */
export const SIGN_IN_REFUSED = 'The email or the password is wrong';

/**
 * Signs a person in. The unknown email and the user without a password are verified against a dummy hash, so
 * every refusal costs one scrypt, as a wrong password does.
 */
export async function signIn(
  ds: DataSource,
  policy: SessionPolicy,
  input: { email: string; password: string; organizationId?: string; address: string | null },
): Promise<SignedIn> {
  const email = input.email.trim().toLowerCase();
  const rows: Array<{ user_id: string; password_hash: string | null }> = await ds.query(
    `SELECT user_id, password_hash FROM users WHERE email = $1`,
    [email],
  );
  const stored = rows[0]?.password_hash ?? null;
  const matches = await verifyPassword(input.password, stored ?? (await dummyPasswordHash()));
  if (!rows[0] || stored === null || !matches) throw unauthorized(SIGN_IN_REFUSED);
  const userId = rows[0].user_id;
  if (needsRehash(stored)) {
    // Stronger parameters than when it was set: stored again, unless the password changed meanwhile.
    await ds.query(`UPDATE users SET password_hash = $1 WHERE user_id = $2 AND password_hash = $3`, [
      await hashPassword(input.password),
      userId,
      stored,
    ]);
  }
  return startSession(ds, policy, { userId, organizationId: input.organizationId, address: input.address });
}

/**
 * A new session of a user who proved who they are (a password, an OIDC provider), in the organization named
 * (they must be a member) or their oldest.
 */
export async function startSession(
  ds: DataSource,
  policy: SessionPolicy,
  input: { userId: string; organizationId?: string; address: string | null },
): Promise<SignedIn> {
  const { userId } = input;
  const { organization_id: organizationId, role } = await membershipToSignInTo(ds, userId, input.organizationId);

  const token = newSecretToken();
  const csrfToken = newSecretToken();
  // The user's ended sessions go now: the table holds what may still be used, and a little more.
  await ds.query(
    `DELETE FROM user_sessions
      WHERE user_id = $1 AND (expires_at <= now() OR last_seen_at <= now() - make_interval(secs => $2))`,
    [userId, policy.idleTimeoutSeconds],
  );
  const sessionId = randomUUID();
  const [row]: Array<{ created_at: Date; last_seen_at: Date; expires_at: Date }> = await ds.query(
    `INSERT INTO user_sessions
       (session_id, token_hash, csrf_hash, organization_id, user_id, created_at, last_seen_at, expires_at, address)
     VALUES ($1, $2, $3, $4, $5, now(), now(), now() + make_interval(secs => $6), $7)
     RETURNING created_at, last_seen_at, expires_at`,
    [
      sessionId,
      hashSecretToken(token),
      hashSecretToken(csrfToken),
      organizationId,
      userId,
      policy.maxAgeSeconds,
      input.address,
    ],
  );
  const user = await ds.getRepository(User).findOneByOrFail({ user_id: userId });
  return { session: viewOf(policy, { sessionId, user, organizationId, role, ...row }), token, csrfToken };
}

/** The organization named (the user must be a member), else the user's oldest membership. */
async function membershipToSignInTo(
  ds: DataSource,
  userId: string,
  named: string | undefined,
): Promise<{ organization_id: string; role: Role }> {
  const rows: Array<{ organization_id: string; role: Role }> = await ds.query(
    `SELECT organization_id, role FROM memberships WHERE user_id = $1 AND ($2::uuid IS NULL OR organization_id = $2)
      ORDER BY created_at, organization_id LIMIT 1`,
    [userId, named ?? null],
  );
  if (rows[0]) return rows[0];
  throw forbidden(named ? `You are not a member of organization ${named}` : 'You are not a member of any organization');
}

/** A session found by its token, with the hash of its CSRF token (the api checks unsafe requests against it). */
export interface ActiveSession {
  caller: Caller;
  view: SessionView;
  csrfHash: Buffer;
}

/**
 * The session of a cookie's token, or undefined when it is unknown or ended (idle too long, past its absolute
 * end, its membership or user gone). Its last use is written when older than a quarter of the idle timeout
 * (at most a minute), so a session in use is not written on every request.
 */
export async function findActiveSession(
  ds: DataSource,
  policy: SessionPolicy,
  token: string,
): Promise<ActiveSession | undefined> {
  const resolution = Math.min(60, policy.idleTimeoutSeconds / 4);
  // The session and its user in one round trip (the foreign keys make the user exist while the session does).
  const rows: Array<{
    session_id: string;
    organization_id: string;
    user_id: string;
    csrf_hash: Buffer;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
    stale: boolean;
    email: string;
    name: string | null;
    user_created_at: Date;
    user_updated_at: Date;
    role: Role;
  }> = await ds.query(
    `SELECT s.session_id, s.organization_id, s.user_id, s.csrf_hash, s.created_at, s.last_seen_at, s.expires_at,
            s.last_seen_at < now() - make_interval(secs => $3) AS stale,
            u.email, u.name, u.created_at AS user_created_at, u.updated_at AS user_updated_at, m.role
       FROM user_sessions s JOIN users u ON u.user_id = s.user_id
       JOIN memberships m ON m.organization_id = s.organization_id AND m.user_id = s.user_id
      WHERE s.token_hash = $1 AND s.expires_at > now() AND s.last_seen_at > now() - make_interval(secs => $2)`,
    [hashSecretToken(token), policy.idleTimeoutSeconds, resolution],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.stale) {
    // An UPDATE answers [rows, count] through TypeORM.
    const [seen]: [Array<{ last_seen_at: Date }>, number] = await ds.query(
      `UPDATE user_sessions SET last_seen_at = now() WHERE session_id = $1 RETURNING last_seen_at`,
      [row.session_id],
    );
    if (!seen[0]) return undefined; // signed out meanwhile
    row.last_seen_at = seen[0].last_seen_at;
  }
  const user = Object.assign(new User(), {
    user_id: row.user_id,
    email: row.email,
    name: row.name,
    created_at: row.user_created_at,
    updated_at: row.user_updated_at,
  });
  return {
    caller: {
      organizationId: row.organization_id,
      userId: row.user_id,
      // The credential's id: rate limits count a session's requests as a key's.
      apiKeyId: row.session_id,
      actor: row.user_id,
      runId: null,
      role: row.role,
      sessionId: row.session_id,
    },
    view: viewOf(policy, { sessionId: row.session_id, user, organizationId: row.organization_id, ...row }),
    csrfHash: row.csrf_hash,
  };
}

/** Ends one session (signing out). */
export async function endSession(ds: DataSource, sessionId: string): Promise<void> {
  await ds.query(`DELETE FROM user_sessions WHERE session_id = $1`, [sessionId]);
}

/** Ends every session of the user, in every organization; answers how many there were. */
export async function endUserSessions(ds: DataSource, userId: string): Promise<number> {
  const [, count]: [unknown, number] = await ds.query(`DELETE FROM user_sessions WHERE user_id = $1`, [userId]);
  return count;
}

function viewOf(
  policy: SessionPolicy,
  row: {
    sessionId: string;
    user: User;
    organizationId: string;
    role: Role;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
  },
): SessionView {
  const idleEnd = row.last_seen_at.getTime() + policy.idleTimeoutSeconds * 1000;
  return {
    sessionId: row.sessionId,
    user: row.user,
    organizationId: row.organizationId,
    role: row.role,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    idleExpiresAt: new Date(Math.min(idleEnd, row.expires_at.getTime())),
  };
}

// One-time links that set a user's password (docs/people.md#password-reset-links): the first `npm start` makes
// one for the first user, `npm run admin -- reset-password` one for any. The link's token is stored hashed; it
// expires (PASSWORD_RESET_TTL_SECONDS) and is used once. A new link replaces the user's unused ones, and a
// password set ends every session of the user.
import type { DataSource } from 'typeorm';
import { HttpError } from '../../errors';
import { hashPassword } from '../../security/passwords';
import { hashSecretToken, newSecretToken } from '../../security/secret-tokens';

/** Where a person follows a reset link: the console's page, the token in the fragment (never sent to a server log). */
export function passwordResetLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/console/set-password#token=${token}`;
}

/** A new reset link's token for the user (its only appearance) and its end; the user's older unused links end. */
export async function createPasswordReset(
  ds: DataSource,
  userId: string,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const token = newSecretToken();
  return ds.transaction(async (tx) => {
    await tx.query(`DELETE FROM password_resets WHERE user_id = $1 AND used_at IS NULL`, [userId]);
    const [row]: Array<{ expires_at: Date }> = await tx.query(
      `INSERT INTO password_resets (token_hash, user_id, created_at, expires_at)
       VALUES ($1, $2, now(), now() + make_interval(secs => $3)) RETURNING expires_at`,
      [hashSecretToken(token), userId, ttlSeconds],
    );
    return { token, expiresAt: row.expires_at };
  });
}

export const RESET_LINK_REFUSED =
  'This password-reset link is unknown, used or expired: ask for another (npm run admin -- reset-password --email <email>)';

/**
 * Sets the password of the link's user and uses the link up; answers the user's id. An unknown link is refused
 * before any hashing (a request costs no scrypt unless its link is good); the claim is one guarded UPDATE, so
 * two requests with the same link cannot both set a password.
 */
export async function setPasswordWithReset(ds: DataSource, token: string, password: string): Promise<string> {
  const tokenHash = hashSecretToken(token);
  const refused = () => new HttpError(404, 'NotFoundError', [{ message: RESET_LINK_REFUSED }]);
  const usable: unknown[] = await ds.query(
    `SELECT 1 FROM password_resets WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()`,
    [tokenHash],
  );
  if (!usable.length) throw refused();
  const passwordHash = await hashPassword(password);
  return ds.transaction(async (tx) => {
    // An UPDATE answers [rows, count] through TypeORM.
    const [claimed]: [Array<{ user_id: string }>, number] = await tx.query(
      `UPDATE password_resets SET used_at = now()
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
      [tokenHash],
    );
    const userId = claimed[0]?.user_id;
    if (!userId) throw refused();
    await tx.query(`UPDATE users SET password_hash = $1, updated_at = now() WHERE user_id = $2`, [
      passwordHash,
      userId,
    ]);
    await tx.query(`DELETE FROM password_resets WHERE user_id = $1 AND used_at IS NULL`, [userId]);
    await tx.query(`DELETE FROM user_sessions WHERE user_id = $1`, [userId]);
    return userId;
  });
}

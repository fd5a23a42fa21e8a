// PostgreSQL refuses to run as root. Run as root, the local server runs as a dedicated system user,
// created when missing; that user must be able to reach its binaries and its data directory.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const POSTGRES_OS_USER = 'tarmac-postgres';
/** Its home: root-owned, readable by all; holds copies of binaries it could not reach where they were. */
export const POSTGRES_OS_HOME = '/var/lib/tarmac-postgres';

export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

function lookup(): OsUser | undefined {
  try {
    const [, , uid, gid] = execFileSync('getent', ['passwd', POSTGRES_OS_USER], { encoding: 'utf8' }).trim().split(':');
    return { name: POSTGRES_OS_USER, uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/** Whom PostgreSQL runs as: undefined when we are not root (then it runs as us). */
export function postgresOsUser(): OsUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const found = lookup();
  if (found) return found;
  try {
    execFileSync(
      'useradd',
      [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        POSTGRES_OS_HOME,
        '--shell',
        '/usr/sbin/nologin',
        '--comment',
        'tarmac local PostgreSQL',
        POSTGRES_OS_USER,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (err) {
    // Another process may have created it at the same moment: only its absence is an error.
    const user = lookup();
    if (user) return user;
    throw new Error(
      `could not create the system user ${POSTGRES_OS_USER} to run PostgreSQL as (PostgreSQL refuses to run as root): ${(err as Error).message}`,
    );
  }
  return lookup()!;
}

/** The first directory on the way to `p` (itself included) that `user` may not pass; undefined if none. */
export function blockedFor(user: OsUser, p: string): string | undefined {
  const dirs: string[] = [];
  for (let d = path.resolve(p); ; d = path.dirname(d)) {
    dirs.unshift(d);
    if (d === path.dirname(d)) break;
  }
  return dirs.find((d) => {
    const st = fs.statSync(d);
    const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    return (st.mode & bit) === 0;
  });
}

/** Spawn options that run a program as `user` (Node drops root's supplementary groups then), with none of our environment. */
export function asUser(user: OsUser | undefined) {
  return { cwd: '/', env: {}, ...(user && { uid: user.uid, gid: user.gid }) };
}

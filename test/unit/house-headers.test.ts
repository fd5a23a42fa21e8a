// Every file's header comment, and every page of the docs, names only files that exist: files move (issue 24
// moved every service into a wing) and a header that points at the old place sends the next reader nowhere.
// A mention is a path under one of the repository's top folders (`src/...`, `test/...`, `docs/...`), with or
// without its extension; a folder counts (`src/services/code/`), and a glob must match a file (`test/unit/house-*.test.ts`). Paths inside a longer path or a URL
// (`dist/test/...`, `https://.../docs/...`) are not mentions of ours.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { existsInRepo, filesUnder, readRepoFile, REPO_ROOT } from '../support/house';

const TOP_FOLDERS = ['src', 'test', 'activities', 'workflows', 'docs', 'bench', 'tools', 'migrations'];
const MENTION = new RegExp(`(?<![\\w./@-])(?:${TOP_FOLDERS.join('|')})/[\\w./*-]*`, 'g');
/** How a mention without its extension may be written. */
const EXTENSIONS = ['.ts', '.test.ts', '.mjs', '.js', '.md', '.sh', '.json', '.py'];

/** The leading comment block: `//` (or `#` for shell) lines and `/* *\/` blocks before the first code line. */
function leadingComment(text: string, lineComment = '//'): string {
  const lines = text.split('\n');
  const header: string[] = [];
  let inBlock = false;
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (index === 0 && line.startsWith('#!')) continue;
    if (inBlock) {
      header.push(line);
      inBlock = !line.includes('*/');
    } else if (line.startsWith(lineComment)) header.push(line);
    else if (line.startsWith('/*')) {
      header.push(line);
      inBlock = !line.includes('*/');
    } else if (line !== '') break;
  }
  return header.join('\n');
}

/** A bare file name (`office.ts`, `kit.ts`): a name of the header's own folder, or of some file of the repository. */
const BARE = /(?<![\w./@-])[\w-]+(?:\.[\w-]+)*\.(?:ts|mjs|sh|py)(?![\w/])/g;

/** The bare file names a header mentions. */
function bareNamesOf(text: string): string[] {
  return [...new Set([...text.matchAll(BARE)].map((m) => m[0]))];
}

let basenames: Set<string> | undefined;
/** Whether `name`, mentioned bare in `file`'s header, is a file beside it or anywhere in the repository. */
function bareExists(file: string, name: string): boolean {
  if (existsInRepo(path.posix.join(path.posix.dirname(file), name))) return true;
  basenames ??= new Set(
    ['src', 'activities', 'workflows', 'test', 'bench', 'tools', 'migrations', 'console/src', 'patches'].flatMap(
      (dir) =>
        filesUnder(dir, ['.ts', '.tsx', '.mjs', '.js', '.sh', '.py', '.patch']).map((f) => path.posix.basename(f)),
    ),
  );
  return basenames.has(name);
}

/** The path-like mentions of a text, without the sentence's trailing punctuation. */
function mentionsOf(text: string): string[] {
  return [...text.matchAll(MENTION)].map((m) => m[0].replace(/[./-]+$/, ''));
}

function exists(mention: string): boolean {
  const star = mention.indexOf('*');
  if (star < 0) return [mention, ...EXTENSIONS.map((ext) => mention + ext)].some(existsInRepo);
  const folder = mention.slice(0, mention.lastIndexOf('/', star));
  const glob = mention.slice(folder.length + 1);
  // A glob over folders (`src/services/*/`): its fixed root must exist.
  if (glob.includes('/') || !existsInRepo(folder)) return existsInRepo(folder);
  const escaped = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(`^${escaped.join('.*')}$`);
  return fs.readdirSync(path.join(REPO_ROOT, folder)).some((name) => pattern.test(name));
}

/** Every file whose header is read, and every page read whole. */
function sources(): Array<{ file: string; text: string }> {
  const headers = [
    ...['src', 'activities', 'workflows', 'test', 'bench', 'tools'].flatMap((dir) => filesUnder(dir, ['.ts', '.mjs'])),
  ].map((file) => ({ file, text: leadingComment(readRepoFile(file)) }));
  const scripts = filesUnder('tools', ['.sh']).map((file) => ({ file, text: leadingComment(readRepoFile(file), '#') }));
  const pages = ['README.md', ...filesUnder('docs', ['.md']), ...filesUnder('bench', ['.md'])].map((file) => ({
    file,
    text: readRepoFile(file),
  }));
  return [...headers, ...scripts, ...pages];
}

describe('the house: headers and docs name files that exist', () => {
  it('reads a header and its mentions the way a reader does', () => {
    const text = [
      '#!/usr/bin/env node',
      '// The runs (src/services/code/runs/state.ts, docs/code-runs.md#lost-output) and src/config.',
      '/* a block: test/support/ and activities/index */',
      '',
      "import x from 'y'; // src/not-in-the-header.ts",
    ].join('\n');
    expect(mentionsOf(leadingComment(text))).to.deep.equal([
      'src/services/code/runs/state.ts',
      'docs/code-runs.md',
      'src/config',
      'test/support',
      'activities/index',
    ]);
    expect(mentionsOf('see dist/test/x.js, https://example.com/docs/y and @scope/src/z')).to.deep.equal([]);
    expect(exists('src/temporal/contracts')).to.equal(true);
    expect(exists('src/temporal/contract')).to.equal(false);
    expect(exists('test/unit/house-*.test.ts')).to.equal(true);
    expect(exists('test/unit/house-layout')).to.equal(true);
    expect(exists('test/unit/nothing-*.test.ts')).to.equal(false);
  });

  it('finds no mention of a file that does not exist', () => {
    const files = sources();
    const mentions = files.flatMap(({ file, text }) =>
      [...new Set(mentionsOf(text))].map((mention) => ({ file, mention })),
    );
    expect(files.length, 'files read').to.be.greaterThan(200);
    expect(mentions.length, 'mentions found').to.be.greaterThan(250);
    const missing = mentions
      .filter(({ mention }) => !exists(mention))
      .map(({ file, mention }) => `${file}: ${mention}`);
    expect(missing).to.deep.equal([]);
  });

  it('finds no bare file name in a header that names no file beside it or elsewhere', () => {
    expect(bareNamesOf('// see office.ts, zip-parts.ts and kit.ts; not dist/x.ts or a.b/c.ts')).to.deep.equal([
      'office.ts',
      'zip-parts.ts',
      'kit.ts',
    ]);
    const stale = sources()
      .filter(({ file }) => !file.endsWith('.md'))
      .flatMap(({ file, text }) => bareNamesOf(text).map((name) => ({ file, name })))
      .filter(({ file, name }) => !bareExists(file, name))
      .map(({ file, name }) => `${file}: ${name}`);
    expect(stale).to.deep.equal([]);
  });
});

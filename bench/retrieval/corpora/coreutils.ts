// The tuning corpus: the manual pages of GNU coreutils as Debian's `coreutils` package ships them
// (/usr/share/man/man1, rendered by `man`; one document per page, duplicates by symlink dropped), with the
// questions of coreutils-questions.ts. Every setting of the ranking (fusion, candidates, chunking, the default
// model) is chosen on this corpus; the others (corpora/*.ts) are only reported.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Corpus, Document } from '../corpus';
import { QUESTIONS } from '../coreutils-questions';

const run = promisify(execFile);

async function documents(): Promise<Document[]> {
  const { stdout } = await run('dpkg', ['-L', 'coreutils']);
  const files = stdout.split('\n').filter((f) => /\/man1\/[a-z0-9]+\.1\.gz$/.test(f));
  const seen = new Set<string>();
  const pages: Document[] = [];
  for (const file of files.sort()) {
    const real = fs.realpathSync(file);
    if (seen.has(real)) continue;
    seen.add(real);
    const rendered = await run('man', ['-l', '-P', 'cat', real], { env: { ...process.env, MANWIDTH: '100' } });
    pages.push({ name: path.basename(file).replace(/\.1\.gz$/, ''), ext: 'txt', text: rendered.stdout });
  }
  if (pages.length < 50) throw new Error(`coreutils manual pages: only ${pages.length} found (is man-db installed?)`);
  return pages;
}

export const corpus: Corpus = {
  name: 'coreutils',
  description: "GNU coreutils' manual pages (Debian's coreutils package): medium reference pages",
  role: 'tuning',
  documents,
  questions: QUESTIONS,
};

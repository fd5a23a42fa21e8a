// Held-out corpus `git` for the retrieval-quality benchmark (bench/retrieval-quality.ts): the manual pages of Git
// as Debian's `git-man` package ships them, written at version 1:2.39.5-0+deb12u3 (Git 2.39.5, Debian 12;
// `dpkg-query -W git-man`). Nothing is downloaded: the pages are read from the installed package, and
// documents() fails with the install command when the package (or man-db, which renders them) is missing.
//
// Shape: long reference documents. One document per page: every `git*` page of sections 1, 5 and 7 that
// `dpkg -L git-man` lists (commands, porcelain and plumbing, git.1 itself, file formats and protocols such as
// gitignore, gitattributes, githooks, gitformat-pack, gitprotocol-v2, and guides such as gitrevisions,
// gitglossary, gittutorial, gitfaq). Not included: scalar.1 (not a git* page) and the Perl module page Git.3pm.
// Each page is rendered to plain text as coreutilsPages() in bench/retrieval-quality.ts does it, by
// `man -l -P cat <file>` with MANWIDTH=100 (and LC_ALL=C.UTF-8, so the text does not depend on the locale);
// pages that are symlinks to the same file are kept once. A document is named after its page without section
// and `.gz` (`git-rebase`, `gitignore`, `gitweb.conf`), ext `txt`, sorted by name. About 185 pages, 3 MB;
// from a few hundred characters (synonym stubs such as git-stage) to 300 KB (git-config).
//
// The questions were written from a reader's side, in a reader's words, by reading the pages to find every
// page that answers each one (an answer is a page where the reader would find how to do it, not one that only
// names the command); no search or ranking of any kind was run on them.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Corpus, Document, Question } from '../corpus';

const run = promisify(execFile);
const PACKAGE = 'git-man';
const WRITTEN_AT = '1:2.39.5-0+deb12u3';
const INSTALL = 'apt-get install git-man man-db';
const PAGE = /\/man([157])\/(git[^/]*)\.\1\.gz$/;

async function installedVersion(): Promise<string> {
  try {
    const { stdout } = await run('dpkg-query', ['-W', '-f', '${Status}\t${Version}', PACKAGE]);
    const [status, version] = stdout.split('\t');
    if (status.endsWith(' installed') && version) return version;
  } catch {
    // not known to dpkg, or dpkg-query itself is missing: reported below
  }
  throw new Error(`git corpus: Debian package ${PACKAGE} is not installed (Debian: ${INSTALL})`);
}

async function documents(): Promise<Document[]> {
  await installedVersion();
  const { stdout } = await run('dpkg', ['-L', PACKAGE], { maxBuffer: 16 * 1024 * 1024 });
  const files = stdout
    .split('\n')
    .filter((f) => PAGE.test(f))
    .sort();
  if (files.length === 0) throw new Error(`git corpus: ${PACKAGE} lists no git* manual pages`);
  const missing = files.filter((f) => !fs.existsSync(f));
  if (missing.length > 0) {
    throw new Error(
      `git corpus: ${missing.length} manual pages of ${PACKAGE} are absent (e.g. ${missing[0]}); ` +
        'is /usr/share/man excluded by a dpkg path-exclude rule? Reinstall with: apt-get install --reinstall git-man',
    );
  }
  const seen = new Set<string>();
  const docs: Document[] = [];
  for (const file of files) {
    const real = fs.realpathSync(file);
    if (seen.has(real)) continue;
    seen.add(real);
    const name = path.basename(file).replace(/\.[157]\.gz$/, '');
    let text: string;
    try {
      const rendered = await run('man', ['-l', '-P', 'cat', real], {
        env: { ...process.env, MANWIDTH: '100', LC_ALL: 'C.UTF-8' },
        maxBuffer: 64 * 1024 * 1024,
      });
      text = rendered.stdout;
    } catch (err) {
      throw new Error(`git corpus: could not render ${file} with man (Debian: ${INSTALL}): ${String(err)}`);
    }
    if (text.trim().length === 0) throw new Error(`git corpus: ${file} rendered to nothing`);
    if (docs.some((d) => d.name === name)) throw new Error(`git corpus: two pages named ${name}`);
    docs.push({ name, ext: 'txt', text });
  }
  if (docs.length < 150) throw new Error(`git corpus: only ${docs.length} pages found in ${PACKAGE}`);
  return docs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const questions: Question[] = [
  {
    question:
      'My ignore file skips a whole build folder, but one settings file inside it must still be committed. ' +
      'How do I write that exception, and why does it not work when I exclude the folder itself?',
    expected: ['gitignore'],
  },
  {
    question:
      'I added a folder to the ignore list but git still shows changes to the files in it that were committed ' +
      'before. How do I stop tracking them while keeping them on disk?',
    expected: ['gitfaq', 'gitignore', 'git-rm'],
  },
  {
    question:
      'A feature worked two months ago and is broken now. How can git help me find the commit that broke it ' +
      'by testing versions halfway between a good one and a bad one?',
    expected: ['git-bisect'],
  },
  {
    question: 'for every line of a source file, show who last changed it and in which commit',
    expected: ['git-blame', 'git-annotate'],
  },
  {
    question:
      'I am halfway through some uncommitted changes and have to fix an urgent bug on another branch. ' +
      'How do I put my work aside and get it back afterwards?',
    expected: ['git-stash', 'git-reset'],
  },
  {
    question: 'copy the change made by one particular commit on another branch onto the branch I am on',
    expected: ['git-cherry-pick', 'giteveryday'],
  },
  {
    question:
      'Before asking for review I want to fold a few small "oops" fix commits into the earlier commits they ' +
      'correct. What is the workflow?',
    expected: ['git-rebase', 'git-commit'],
  },
  { question: 'fix a typo in the message of the commit I just made', expected: ['git-commit', 'gitfaq'] },
  {
    question:
      'I did a hard reset and my last three commits disappeared from the branch. How do I find them and go back?',
    expected: ['git-reflog', 'git-reset', 'gitrevisions', 'git-rev-parse'],
  },
  {
    question: 'run the test suite automatically every time someone commits locally and refuse the commit if it fails',
    expected: ['githooks'],
  },
  {
    question: 'How do I refer to the grandparent of the current commit, or to the second parent of a merge commit?',
    expected: ['gitrevisions', 'git-rev-parse', 'gittutorial'],
  },
  {
    question:
      'Colleagues on Windows keep committing files with carriage-return line endings. How can the repository ' +
      'always store plain LF line endings?',
    expected: ['gitattributes', 'git-config', 'gitfaq'],
  },
  {
    question: 'define my own short command name that expands to a longer git command with options',
    expected: ['git-config'],
  },
  {
    question:
      'work on a second branch in another directory at the same time, sharing one repository instead of cloning twice',
    expected: ['git-worktree'],
  },
  {
    question: 'our monorepo is huge: how can I have only a couple of its directories present in my working copy?',
    expected: ['git-sparse-checkout', 'git-read-tree'],
  },
  {
    question: 'make a copy of a big remote project with only the most recent commit, not its whole history',
    expected: ['git-clone'],
  },
  {
    question: "include another project's repository in a subfolder of mine, locked to an exact commit of that project",
    expected: ['git-submodule', 'gitsubmodules'],
  },
  {
    question: 'delete all untracked files and directories such as build leftovers from my checkout',
    expected: ['git-clean'],
  },
  {
    question: "create a zip file of the project's source code exactly as it was at a release tag",
    expected: ['git-archive'],
  },
  {
    question: 'turn my last three commits into files I can email to a project mailing list',
    expected: ['git-format-patch', 'giteveryday'],
  },
  {
    question:
      'apply a series of patches someone mailed me, saved in a mailbox file, keeping their authorship and messages',
    expected: ['git-am', 'giteveryday'],
  },
  {
    question: 'summarize the history by contributor with commit counts, for release notes',
    expected: ['git-shortlog'],
  },
  {
    question: 'generate a version string like v2.1-7-g1a2b3c from the closest tag, to embed in a build',
    expected: ['git-describe'],
  },
  { question: 'after a disk failure, check the repository for corrupted or missing objects', expected: ['git-fsck'] },
  {
    question: 'search all tracked files, or the files of an older release, for a function name',
    expected: ['git-grep', 'gittutorial'],
  },
  {
    question:
      'One contributor has commits under three different email addresses. How do I make the history tools show ' +
      'them as a single person?',
    expected: ['gitmailmap'],
  },
  {
    question: 'stop being asked for my username and password on every push over HTTPS',
    expected: ['gitcredentials', 'git-credential-cache', 'git-credential-store', 'gitfaq'],
  },
  {
    question:
      'Can git remember how I resolved a conflict, so the same conflict is fixed by itself when it comes back ' +
      'in a later rebase?',
    expected: ['git-rerere', 'git-config'],
  },
  {
    question: 'a file with a password was committed months ago: rewrite every commit so that file never existed',
    expected: ['git-filter-branch'],
  },
  {
    question:
      'After checking out a tag git says I am in "detached HEAD" state. What does that mean, and how do I keep ' +
      'the commits I make there?',
    expected: ['git-checkout', 'gitglossary'],
  },
  {
    question:
      'list the file names, modes and object ids stored in a directory of an old commit without checking it out',
    expected: ['git-ls-tree', 'gittutorial-2'],
  },
  {
    question: "compute the id git would give a file's contents, without adding the file to the repository",
    expected: ['git-hash-object'],
  },
  {
    question: 'serve my repositories over HTTP behind Apache so that people can both clone and push',
    expected: ['git-http-backend'],
  },
  {
    question:
      'What are the files and folders inside the .git directory for, like packed-refs, info or the hooks folder?',
    expected: ['gitrepository-layout'],
  },
  {
    question:
      'I need to undo a merge that is already on the shared branch, but git refuses because it is a merge ' +
      'commit. How do I tell it which parent to keep?',
    expected: ['git-revert'],
  },
  {
    question: 'throw away my uncommitted edits to one file and get back the last committed version',
    expected: ['git-restore', 'git-checkout'],
  },
  {
    question: 'show the whole history of a file, including the commits from before it was renamed',
    expected: ['git-log'],
  },
  {
    question: 'find the commit where two branches split off from each other',
    expected: ['git-merge-base', 'gitcore-tutorial'],
  },
  {
    question: 'a file I expect to be tracked is being ignored: which pattern in which ignore file is doing it?',
    expected: ['git-check-ignore'],
  },
  {
    question: 'What is the binary layout of the .idx index file that goes with a packfile?',
    expected: ['gitformat-pack'],
  },
  {
    question: 'use my work email address automatically in every repository under ~/work, and my personal one elsewhere',
    expected: ['git-config'],
  },
  {
    question:
      'make git print which internal commands and child processes it runs, to debug what a slow command is doing',
    expected: ['git', 'git-config'],
  },
  {
    question:
      'Without rewriting any commits, make git treat an old commit as if it had a different parent, to join ' +
      'an imported old history onto the current one',
    expected: ['git-replace', 'gitrepository-layout', 'gitglossary'],
  },
  {
    question: 'my push was rejected because the remote has commits I do not have. What happened and what should I do?',
    expected: ['git-push'],
  },
  {
    question: 'Why does merging sometimes just move my branch forward without creating a merge commit?',
    expected: ['git-merge', 'gitglossary', 'gitcore-tutorial'],
  },
];

export const corpus: Corpus = {
  name: 'git',
  description:
    `Manual pages of Git from Debian's ${PACKAGE} package (written at ${WRITTEN_AT}), every git* page of ` +
    'sections 1, 5 and 7 rendered to plain text by man (MANWIDTH=100): long reference documents, one per page.',
  role: 'held-out',
  documents,
  questions,
};

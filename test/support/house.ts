// What the house tests (test/unit/house-*.test.ts) read: the repository's own files, from its root, without
// a stack. Compiled to dist/test/support/, so the root is three folders up.
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** Folders that are built, fetched or cached, never written by hand. */
const NOT_SOURCE = new Set(['node_modules', 'dist', '__pycache__']);

/** Every file under `dir` (relative to the root, `/`-separated, sorted) whose name ends with one of `endings`. */
export function filesUnder(dir: string, endings: string[]): string[] {
  const found: string[] = [];
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, relative), { withFileTypes: true })) {
      if (entry.name.startsWith('.') || NOT_SOURCE.has(entry.name)) continue;
      const child = `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && endings.some((ending) => entry.name.endsWith(ending))) found.push(child);
    }
  };
  walk(dir);
  return found.sort();
}

export const readRepoFile = (relative: string) => fs.readFileSync(path.join(REPO_ROOT, relative), 'utf8');

export const existsInRepo = (relative: string) => fs.existsSync(path.join(REPO_ROOT, relative));

// The first load's JavaScript, gzipped, stays under the budget of docs/console.md (300 KB): the build fails above it.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const BUDGET_BYTES = 300 * 1024;
const out = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'dist', 'console');
const html = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
const scripts = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
const bytes = scripts.reduce((sum, s) => sum + zlib.gzipSync(fs.readFileSync(path.join(out, s))).length, 0);
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
if (!scripts.length) throw new Error('console: no script found in index.html');
if (bytes > BUDGET_BYTES) {
  console.error(`console: first-load JavaScript is ${kb(bytes)} gzipped, over the budget of ${kb(BUDGET_BYTES)}`);
  process.exit(1);
}
console.log(`console: first-load JavaScript ${kb(bytes)} gzipped (budget ${kb(BUDGET_BYTES)})`);

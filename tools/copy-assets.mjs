// After tsc: copies the non-TypeScript files the compiled code reads at run time into dist/ (the Docker
// image ships dist/ only): the function and tool shims of src/runtime/shims.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const from = path.join(root, 'src', 'runtime', 'shims');
const to = path.join(root, 'dist', 'src', 'runtime', 'shims');
fs.mkdirSync(to, { recursive: true });
for (const name of fs.readdirSync(from)) {
  if (/\.(py|mjs)$/.test(name)) fs.copyFileSync(path.join(from, name), path.join(to, name));
}

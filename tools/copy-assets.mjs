// After tsc: copies the non-TypeScript files the compiled code reads at run time into dist/ (the Docker
// image ships dist/ only): the function and tool shims of src/runtime/shims. And removes compiled files whose
// source is gone: tsc never does, and a stale one misleads, e.g. dist/src/config.js would shadow the module
// src/config/index.ts compiles to, and mocha would run a moved test twice.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const from = path.join(root, 'src', 'runtime', 'shims');
const to = path.join(root, 'dist', 'src', 'runtime', 'shims');
fs.mkdirSync(to, { recursive: true });
for (const name of fs.readdirSync(from)) {
  if (/\.(py|mjs)$/.test(name)) fs.copyFileSync(path.join(from, name), path.join(to, name));
}

const dist = path.join(root, 'dist');
// Only what tsc writes: dist/console is the console's bundle (tools/build-console.mjs), not compiled TypeScript.
const consoleBuild = path.join(dist, 'console');
for (const entry of fs.readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const compiled = /^(.*)\.(js|js\.map|d\.ts)$/.exec(entry.name);
  if (!entry.isFile() || !compiled) continue;
  if (entry.parentPath === consoleBuild || entry.parentPath.startsWith(consoleBuild + path.sep)) continue;
  const source = path.join(root, path.relative(dist, entry.parentPath), `${compiled[1]}.ts`);
  if (!fs.existsSync(source)) fs.rmSync(path.join(entry.parentPath, entry.name));
}

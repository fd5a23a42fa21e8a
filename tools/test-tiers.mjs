// `npm test`'s mocha, in three tiers run in this order, stopping at the first that fails (docs/testing.md):
//   unit   test/unit/** files that start no stack (they import nothing of test/harness/stack), in parallel, no hooks;
//   stack  every other test file but the slow ones, against one real stack (test/support/hooks.ts);
//   slow   the quick resilience drills, the schema fuzzer and the compat suite, against a stack of their own.
// `node tools/test-tiers.mjs [unit|stack|slow ...]` runs the named tiers only. Each tier prints mocha's own
// report; the last lines give each tier's time and the counts of all of them together, mocha's way.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const SLOW = ['test/drills/', 'test/fuzz/', 'test/compat/'];

function testFiles(dir) {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(`${dir}/${e.name}`) : [`${dir}/${e.name}`]))
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
}

const startsAStack = (file) =>
  /from '[./]*(harness\/stack|support\/hooks)'/.test(fs.readFileSync(path.join(ROOT, file), 'utf8'));
const compiled = (file) => `dist/${file.replace(/\.ts$/, '.js')}`;

const all = testFiles('test');
const unit = all.filter((f) => f.startsWith('test/unit/') && !startsAStack(f));
const slow = all.filter((f) => SLOW.some((dir) => f.startsWith(dir)));
const stack = all.filter((f) => !unit.includes(f) && !slow.includes(f));

const MOCHA = path.join(ROOT, 'node_modules', '.bin', 'mocha');
/** As .mocharc.json, but for the files given: one real stack for the tier (the root hooks). */
const WITH_STACK = ['--no-config', '--require', 'dist/test/support/hooks.js', '--timeout', '60000', '--exit'];
const TIERS = {
  unit: ['--no-config', '--timeout', '60000', '--exit', '--parallel', '--jobs', '2', ...unit.map(compiled)],
  stack: [...WITH_STACK, ...stack.map(compiled)],
  slow: [...WITH_STACK, ...slow.map(compiled)],
};

const chosen = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(TIERS);
const unknown = chosen.filter((t) => !(t in TIERS));
if (unknown.length) {
  console.error(`unknown tier ${unknown.join(', ')}: tiers are ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}

const totals = { passing: 0, failing: 0, pending: 0 };
const times = [];
let status = 0;
for (const tier of chosen) {
  console.log(`\n==> test tier: ${tier} (${TIERS[tier].filter((a) => a.endsWith('.test.js')).length} files)`);
  const started = Date.now();
  // mocha's report is shown as it comes and kept to count it.
  const r = await new Promise((resolve) => {
    const child = spawn(MOCHA, TIERS[tier], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      stdout += chunk.toString('utf8');
    });
    child.on('close', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0), stdout }));
  });
  const count = (what) =>
    Number([...(r.stdout ?? '').matchAll(new RegExp(`^\\s*(\\d+) ${what}\\b`, 'gm'))].at(-1)?.[1] ?? 0);
  for (const what of Object.keys(totals)) totals[what] += count(what);
  times.push(`${tier} ${((Date.now() - started) / 60000).toFixed(1)} min`);
  if (r.status !== 0) {
    status = r.status ?? 1;
    console.log(`==> tier ${tier} failed (status ${status}): the tiers after it do not run`);
    break;
  }
}
console.log(`\n==> tiers: ${times.join(', ')}`);
console.log(`  ${totals.passing} passing (all tiers)`);
if (totals.pending) console.log(`  ${totals.pending} pending (all tiers)`);
if (totals.failing) console.log(`  ${totals.failing} failing (all tiers)`);
process.exit(status);

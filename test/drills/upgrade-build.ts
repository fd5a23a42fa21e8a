// Build B of the upgrade drill (upgrade.ts): a copy of this build, as a release would ship it, whose workflow code
// really changed and which brings a migration of its own. dist/ is copied to a directory of the drill's and the
// rest of the checkout (node_modules, console, tools...) linked beside it. Every workflow of the copy begins with a
// timer that build A's never had: a history recorded by A does not replay on B (the drill shows it), so only
// pinning keeps A's runs off B. The expand migration adds a nullable column (A's code, which never names it, keeps
// writing rows); the contract migration of "the next release" drops it again, once no process of A is left.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { quietBundlerLogger } from '../harness/stack';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const EXPAND = 'UpgradeDrillExpand1799999990000';
const CONTRACT = 'UpgradeDrillContract1799999991000';
/** What the patch puts first in each workflow: a 1 ms timer, a command no history of build A has there. */
const FIRST_TIMER = 'await require("@temporalio/workflow").sleep(1); // build B of the upgrade drill';

export interface BuildB {
  /** The copy's dist/ (its api, worker and migrate scripts). */
  dist: string;
  /** Its workflow code, bundled (as a worker image bundles it). */
  bundle: string;
  bundleCode: string;
  /** The workflows the patch changed. */
  patched: string[];
}

/** Copies this build to `dir`, changes every workflow's first step, adds the expand migration, bundles it. */
export async function makeBuildB(dir: string): Promise<BuildB> {
  const dist = path.join(dir, 'dist');
  fs.cpSync(path.join(ROOT, 'dist'), dist, { recursive: true });
  for (const entry of fs.readdirSync(ROOT))
    if (entry !== 'dist' && entry !== '.git')
      fs.symlinkSync(fs.realpathSync(path.join(ROOT, entry)), path.join(dir, entry));

  const patched: string[] = [];
  const workflows = path.join(dist, 'workflows');
  for (const file of fs.readdirSync(workflows).filter((f) => f.endsWith('.js'))) {
    const code = fs.readFileSync(path.join(workflows, file), 'utf8');
    const changed = code.replace(/^(async function (\w+Workflow)\([^)]*\) \{)$/gm, (whole, _head, name: string) => {
      patched.push(name);
      return `${whole}\n    ${FIRST_TIMER}`;
    });
    fs.writeFileSync(path.join(workflows, file), changed);
  }
  // Every workflow the worker registers must have changed (a compiler that emits another shape fails here).
  const index = fs.readFileSync(path.join(workflows, 'index.js'), 'utf8');
  const exported = [...index.matchAll(/Object\.defineProperty\(exports, "(\w+)"/g)]
    .map((m) => m[1])
    .filter((name) => name !== '__esModule');
  const missed = exported.filter((name) => !patched.includes(name));
  if (missed.length) throw new Error(`the patch of build B missed the workflows ${missed.join(', ')}`);

  addMigration(
    dist,
    EXPAND,
    'ALTER TABLE runs ADD COLUMN upgrade_drill_note text',
    'ALTER TABLE runs DROP COLUMN upgrade_drill_note',
  );
  const bundle = path.join(dir, 'workflow-bundle-b.js');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(workflows, 'index.js'),
    logger: quietBundlerLogger,
  });
  if (!code.includes('build B of the upgrade drill')) throw new Error("build B's bundle lacks its patched workflows");
  fs.writeFileSync(bundle, code);
  fs.chmodSync(bundle, 0o644);
  return { dist, bundle, bundleCode: code, patched };
}

/** The contract migration of the release after B: it drops what the expand added. */
export function addContractMigration(b: BuildB): void {
  addMigration(b.dist, CONTRACT, 'ALTER TABLE runs DROP COLUMN IF EXISTS upgrade_drill_note', 'SELECT 1');
}

/** The copy's `npm run migrate` on `env`'s database: the names of the migrations it applied. */
export async function migrateWith(b: BuildB, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(b.dist, 'src', 'cli', 'migrate.js')], {
    env,
    timeout: 60_000,
  });
  return [...stdout.matchAll(/^migrate: applied (\S+)$/gm)].map((m) => m[1]);
}

/** A compiled migration class `name` (up, down) appended to the copy's list of migrations. */
function addMigration(dist: string, name: string, up: string, down: string): void {
  const dir = path.join(dist, 'migrations');
  fs.writeFileSync(
    path.join(dir, `${name}.js`),
    `"use strict";\nclass ${name} {\n  name = '${name}';\n  async up(q) { await q.query(${JSON.stringify(up)}); }\n` +
      `  async down(q) { await q.query(${JSON.stringify(down)}); }\n}\nexports.${name} = ${name};\n`,
  );
  const index = path.join(dir, 'index.js');
  const list = fs.readFileSync(index, 'utf8');
  const end = list.lastIndexOf('];');
  if (end < 0 || !list.includes('exports.migrations = [')) throw new Error(`${index} has no list of migrations`);
  fs.writeFileSync(index, `${list.slice(0, end)}    require("./${name}").${name},\n${list.slice(end)}`);
}

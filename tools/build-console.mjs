// The web console's build (console/, docs/console.md), run by `npm run build`:
//   `node tools/build-console.mjs deps`  before tsc: installs console/node_modules with `npm ci` from its own
//                                        lock file when missing or older than the lock (the e2e test's types come from it);
//   `node tools/build-console.mjs`       after tsc: writes the OpenAPI document the compiled api produces, generates
//                                        the console's typed client from it, type-checks and bundles into dist/console.
// The bundle is rebuilt only when its inputs (sources, lock file, the OpenAPI document) changed.
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const consoleDir = path.join(root, 'console');
const outDir = path.join(root, 'dist', 'console');
const stampFile = path.join(outDir, '.build-stamp');
const say = (m) => process.stdout.write(`console: ${m}\n`);
const npm = (...args) => execFileSync('npm', args, { cwd: consoleDir, stdio: ['ignore', 'inherit', 'inherit'] });

function installDependencies() {
  const lock = path.join(consoleDir, 'package-lock.json');
  const installed = path.join(consoleDir, 'node_modules', '.package-lock.json');
  if (fs.existsSync(installed) && fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  // A linked node_modules (a git worktree sharing another checkout's) belongs to that checkout: npm ci here
  // would empty it through the link.
  const modules = path.join(consoleDir, 'node_modules');
  if (fs.existsSync(modules) && fs.lstatSync(modules).isSymbolicLink()) return;
  say('installing its dependencies (npm ci, from console/package-lock.json)...');
  try {
    npm('ci', '--no-audit', '--no-fund', '--loglevel=error');
  } catch {
    // As .ci/run: npm ci refuses a lock whose optional platform packages (other OSes' builds of the bundler)
    // the registry lacks; npm install honours the same lock.
    say('npm ci refused the lock file; npm install (same lock file)');
    npm('install', '--no-audit', '--no-fund', '--loglevel=error');
  }
}

function openApiDocument() {
  const require = createRequire(import.meta.url);
  require(path.join(root, 'dist', 'src', 'api', 'routes', 'index.js'));
  const { buildOpenApi } = require(path.join(root, 'dist', 'src', 'api', 'openapi.js'));
  // The server URL is the page's own origin: the console calls the api that served it.
  const document = buildOpenApi({ serverUrl: '/', maxPageSize: 100 });
  // JsonValue (any JSON value) declares no `type`; openapi-typescript would read it as an object only, and every
  // body that allows extra members (`additionalProperties: JsonValue`) would refuse its own string members.
  document.components.schemas.JsonValue = { description: document.components.schemas.JsonValue.description };
  return `${JSON.stringify(document, null, 2)}\n`;
}

function filesUnder(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath ?? e.path, e.name))
    .sort();
}

function inputsHash(document) {
  const hash = crypto.createHash('sha256').update(document);
  const inputs = [
    ...filesUnder(path.join(consoleDir, 'src')).filter((f) => !f.endsWith('.gen.ts')),
    ...filesUnder(path.join(consoleDir, 'scripts')),
    ...['index.html', 'package.json', 'package-lock.json', 'tsconfig.json', 'vite.config.ts'].map((f) =>
      path.join(consoleDir, f),
    ),
  ];
  for (const file of inputs) hash.update(path.relative(consoleDir, file)).update(fs.readFileSync(file));
  return hash.digest('hex');
}

function writeIfChanged(file, text) {
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

installDependencies();
if (process.argv[2] !== 'deps') {
  const document = openApiDocument();
  const stamp = inputsHash(document);
  const built = fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp;
  if (!built) {
    writeIfChanged(path.join(consoleDir, 'generated', 'openapi.json'), document);
    say('generating the API client from the OpenAPI document and building...');
    npm('run', '-s', 'generate');
    npm('run', '-s', 'build');
    fs.writeFileSync(stampFile, stamp);
  }
}

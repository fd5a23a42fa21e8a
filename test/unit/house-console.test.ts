// The console (console/src) is a client of the public API like any other (docs/console.md): it imports nothing
// from outside console/ (a relative import stays inside it; a package is one of console/package.json's
// dependencies), its generated API types (console/src/api/schema.gen.ts) are read through console/src/api, only
// console/src/api reaches the network (fetch, the typed client's methods, EventSource), and query keys are named
// in console/src/api/query-keys.ts alone. The lint says the same as you type; this reads the files and
// starts no stack.
import path from 'node:path';
import ts from 'typescript';
import { expect } from 'chai';
import { filesUnder, readRepoFile } from '../support/house';

const CONSOLE_SRC = 'console/src';
const API_DIR = 'console/src/api/';
const GENERATED = 'console/src/api/schema.gen';
const QUERY_KEYS = 'console/src/api/query-keys.ts';
/** The typed client (openapi-fetch) and what answers its calls: console/src/api only. */
const CLIENT = 'console/src/api/client';
const CLIENT_VALUES = ['api', 'data'];
const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE']);
const NETWORK_CONSTRUCTORS = new Set(['EventSource', 'XMLHttpRequest', 'WebSocket']);

const dependencies = Object.keys(
  (JSON.parse(readRepoFile('console/package.json')) as { dependencies: Record<string, string> }).dependencies,
);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Where a relative specifier points from `file`, without its extension (it need not exist: schema.gen.ts is built). */
const target = (file: string, specifier: string) =>
  path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.(tsx?|js)$/, '');

/** What `file` (a path under console/src) breaks of the rules above, a line each. */
export function findings(file: string, text: string): string[] {
  const inApi = file.startsWith(API_DIR);
  const found: string[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;

  for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
    if (specifier.startsWith('.')) {
      const to = target(file, specifier);
      if (!to.startsWith('console/')) found.push(`${file} imports ${specifier}, outside console/`);
      else if (to === GENERATED && !inApi) found.push(`${file} imports the generated types: read them from ${CLIENT}`);
    } else if (!dependencies.includes(packageOf(specifier)))
      found.push(`${file} imports ${specifier}, not a dependency of console/package.json`);
    else if (specifier === 'openapi-fetch' && !inApi) found.push(`${file} imports openapi-fetch: only ${API_DIR}`);
  }

  const visit = (node: ts.Node) => {
    if (
      !inApi &&
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      target(file, node.moduleSpecifier.text) === CLIENT &&
      !node.importClause?.isTypeOnly
    ) {
      const bindings = node.importClause?.namedBindings;
      const names = bindings && ts.isNamedImports(bindings) ? bindings.elements : [];
      for (const n of names)
        if (!n.isTypeOnly && CLIENT_VALUES.includes((n.propertyName ?? n.name).text))
          found.push(`${at(n)} imports ${(n.propertyName ?? n.name).text} of the client: call ${API_DIR}<resource>.ts`);
    }
    if (!inApi && ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name === 'fetch' || name === 'sendBeacon' || (name && HTTP_METHODS.has(name)))
        found.push(`${at(node)} calls ${name}: only ${API_DIR} calls the API`);
    }
    if (!inApi && ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
      if (NETWORK_CONSTRUCTORS.has(node.expression.text))
        found.push(`${at(node)} opens ${node.expression.text}: only ${API_DIR} calls the API`);
    }
    if (
      file !== QUERY_KEYS &&
      ts.isPropertyAssignment(node) &&
      node.name.getText(source) === 'queryKey' &&
      ts.isArrayLiteralExpression(node.initializer)
    )
      found.push(`${at(node)} spells a query key: name it in ${QUERY_KEYS}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('house: the console', () => {
  const files = filesUnder(CONSOLE_SRC, ['.ts', '.tsx']).filter((f) => !f.endsWith('.gen.ts'));

  it('reads the console sources', () => {
    expect(files.length).to.be.greaterThan(30);
    expect(files).to.include.members(['console/src/pages/runs.tsx', 'console/src/api/client.ts', QUERY_KEYS]);
  });

  it('finds each kind of breach (the check itself)', () => {
    const page = [
      "import { api, data, type Schemas } from '../api/client';",
      "import type { paths } from '../api/schema.gen';",
      "import { config } from '../../../src/config';",
      "import pg from 'pg';",
      "import createClient from 'openapi-fetch';",
      'export const a = () => fetch("/api/users");',
      'export const b = () => window.fetch("/api/users");',
      'export const c = () => data(api.GET("/api/users"));',
      'export const d = () => new EventSource("/api/runs/stream");',
      "export const e = { queryKey: ['runs', 1] };",
    ].join('\n');
    expect(findings('console/src/pages/sample.tsx', page)).to.deep.equal([
      'console/src/pages/sample.tsx imports the generated types: read them from console/src/api/client',
      'console/src/pages/sample.tsx imports ../../../src/config, outside console/',
      'console/src/pages/sample.tsx imports pg, not a dependency of console/package.json',
      'console/src/pages/sample.tsx imports openapi-fetch: only console/src/api/',
      'console/src/pages/sample.tsx:1 imports api of the client: call console/src/api/<resource>.ts',
      'console/src/pages/sample.tsx:1 imports data of the client: call console/src/api/<resource>.ts',
      'console/src/pages/sample.tsx:6 calls fetch: only console/src/api/ calls the API',
      'console/src/pages/sample.tsx:7 calls fetch: only console/src/api/ calls the API',
      'console/src/pages/sample.tsx:8 calls GET: only console/src/api/ calls the API',
      'console/src/pages/sample.tsx:9 opens EventSource: only console/src/api/ calls the API',
      'console/src/pages/sample.tsx:10 spells a query key: name it in console/src/api/query-keys.ts',
    ]);
    // In console/src/api the same calls and imports are the point, but a query key is still spelled elsewhere.
    expect(findings('console/src/api/sample.ts', page)).to.deep.equal([
      'console/src/api/sample.ts imports ../../../src/config, outside console/',
      'console/src/api/sample.ts imports pg, not a dependency of console/package.json',
      'console/src/api/sample.ts:10 spells a query key: name it in console/src/api/query-keys.ts',
    ]);
  });

  it('sees the calls the resource modules make (so it would see them anywhere else)', () => {
    const asIfAPage = findings('console/src/pages/structures.ts', readRepoFile('console/src/api/structures.ts'));
    expect(asIfAPage.filter((f) => f.includes(' calls GET'))).to.have.length.greaterThan(0);
  });

  it('imports nothing from outside console/, reaches the API only through console/src/api, names query keys once', () => {
    const breaches = files.flatMap((file) => findings(file, readRepoFile(file)));
    expect(breaches, `the console's rules (docs/console.md):\n${breaches.join('\n')}`).to.deep.equal([]);
  });
});

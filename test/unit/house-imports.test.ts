// The house's import graph, read from the sources (src/, activities/, workflows/): no import circles (type-only
// imports count: a circle of types is still two modules that cannot be read one without the other), and no
// arrow from a lower floor (persistence, temporal, runtime, jobs) up to the services or the activities.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['src', 'activities', 'workflows'];
const LOWER_FLOORS = ['src/persistence', 'src/temporal', 'src/runtime', 'src/jobs'];
const UPPER_FLOORS = ['src/services', 'activities'];

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The file a relative specifier names (`./x` → x.ts, x.tsx or x/index.ts), or undefined (a package). */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.posix.join(path.posix.dirname(from), specifier.replace(/\.js$/, ''));
  return [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((f) => fs.existsSync(path.join(ROOT, f)));
}

/** file → the files it imports (import, import type, export … from, dynamic import with a literal). */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of SCANNED.flatMap(sourceFiles)) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const imported = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
    graph.set(file, [...new Set(imported.flatMap((s) => resolve(file, s) ?? []))]);
  }
  return graph;
}

/** Every elementary circle found by a depth-first walk, each named once (from its smallest file). */
export function circles(graph: Map<string, string[]>): string[][] {
  const found = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const circle = stack.slice(stack.indexOf(next));
        const start = circle.indexOf([...circle].sort()[0]);
        const named = [...circle.slice(start), ...circle.slice(0, start)];
        found.set(named.join(' → '), named);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return [...found.values()];
}

const under = (file: string, dirs: string[]) => dirs.some((d) => file === d || file.startsWith(`${d}/`));

describe('house: imports', () => {
  const graph = importGraph();

  it('reads the sources', () => {
    expect(graph.size).to.be.greaterThan(100);
    expect(graph.get('activities/index.ts')).to.include('activities/deps.ts');
  });

  it('finds a circle when there is one (the walk itself)', () => {
    const sample = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['b.ts']],
    ]);
    expect(circles(sample)).to.deep.equal([['b.ts', 'c.ts']]);
  });

  it('has no import circle', () => {
    const named = circles(graph).map((c) => [...c, c[0]].join(' → '));
    expect(named, `import circles:\n${named.join('\n')}`).to.deep.equal([]);
  });

  it('has no arrow from a lower floor up to the services or the activities', () => {
    const upward = [...graph].flatMap(([file, imports]) =>
      under(file, LOWER_FLOORS) ? imports.filter((i) => under(i, UPPER_FLOORS)).map((i) => `${file} → ${i}`) : [],
    );
    expect(upward, `upward imports:\n${upward.join('\n')}`).to.deep.equal([]);
  });
});

// The house's import graph, read from the sources (src/, activities/, workflows/): no import circles (type-only
// imports count: a circle of types is still two modules that cannot be read one without the other), the floors
// in one order (persistence ← temporal ← jobs ← services ← api and activities: each imports only the floors
// below it), and no arrow from the runtime of user code up to the services or the activities.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['src', 'activities', 'workflows'];
/** The floors, lowest first: a file may import its own floor and those below, never one above. */
const FLOORS = [['src/persistence'], ['src/temporal'], ['src/jobs'], ['src/services'], ['src/api', 'activities']];
const LOWER_FLOORS = ['src/runtime'];
const UPPER_FLOORS = ['src/services', 'src/api', 'activities'];

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
/** The floor of `file` (its index in FLOORS), or -1 outside them. */
const floorOf = (file: string) => FLOORS.findIndex((dirs) => under(file, dirs));

/** The arrows that go up a floor: `file → import` where the import's floor is above the file's. */
export function upwardArrows(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, imports]) => {
    const floor = floorOf(file);
    if (floor < 0) return [];
    return imports.filter((i) => floorOf(i) > floor).map((i) => `${file} → ${i}`);
  });
}

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

  it('reads the floor order as intended', () => {
    const sample = new Map([
      ['src/persistence/a.ts', ['src/temporal/b.ts']],
      ['src/jobs/c.ts', ['src/temporal/b.ts', 'src/persistence/a.ts']],
      ['src/services/d.ts', ['src/jobs/c.ts']],
      ['activities/e.ts', ['src/services/d.ts', 'src/api/f.ts']],
    ]);
    expect(upwardArrows(sample)).to.deep.equal(['src/persistence/a.ts → src/temporal/b.ts']);
  });

  it('imports only down the floors: persistence ← temporal ← jobs ← services ← api and activities', () => {
    const upward = upwardArrows(graph);
    expect(upward, `imports up a floor:\n${upward.join('\n')}`).to.deep.equal([]);
  });

  it('has no arrow from the runtime of user code up to the services, the api or the activities', () => {
    const upward = [...graph].flatMap(([file, imports]) =>
      under(file, LOWER_FLOORS) ? imports.filter((i) => under(i, UPPER_FLOORS)).map((i) => `${file} → ${i}`) : [],
    );
    expect(upward, `upward imports:\n${upward.join('\n')}`).to.deep.equal([]);
  });
});

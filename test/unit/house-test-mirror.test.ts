// Tests mirror the code they test, so a file's test is found from its path (docs/testing.md): the unit test of
// src/<path>.ts is test/unit/<path>.test.ts, the test of workflows/<name>.ts is test/workflows/<name>.test.ts and
// that of activities/<name>.ts is test/activities/<name>.test.ts. A second test of the same file names its aspect
// after a dot: a `cgroups.v1` test beside the `cgroups` one would test the same source file. Only the house tests
// (test/unit/house-*.test.ts), which check the whole repository, name no source file.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../../..');

/** Each folder of tests and the folder of the code its tests name. */
const MIRRORS = [
  { tests: 'test/unit', code: 'src' },
  { tests: 'test/workflows', code: 'workflows' },
  { tests: 'test/activities', code: 'activities' },
] as const;

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((file) => file.endsWith('.test.ts'));
}

/** The files of `code` a test at `relative` (to its tests folder, without `.test.ts`) may name. */
function candidates(code: string, relative: string): string[] {
  const dir = path.posix.dirname(relative);
  const [name, aspect] = path.posix.basename(relative).split('.', 2);
  const stems = [relative, ...(aspect ? [path.posix.join(dir, name)] : [])];
  return stems.flatMap((stem) => [`${code}/${stem}.ts`, `${code}/${stem}/index.ts`]);
}

describe('house: tests mirror the source', () => {
  for (const { tests, code } of MIRRORS) {
    it(`every ${tests} file is named after the ${code}/ file it tests`, () => {
      const dir = path.join(ROOT, tests);
      const files = testFiles(dir).map((file) => path.relative(dir, file).split(path.sep).join('/'));
      expect(files.length).to.be.greaterThan(0);
      const orphans = files
        .filter((file) => tests !== 'test/unit' || !/^house-[^/]*\.test\.ts$/.test(file))
        .filter((file) => {
          const names = candidates(code, file.slice(0, -'.test.ts'.length));
          return !names.some((c) => fs.existsSync(path.join(ROOT, c)));
        })
        .map((file) => `${tests}/${file}`);
      expect(
        orphans,
        `tests that name no file of ${code}/ (${code}/<path>.ts → ${tests}/<path>.test.ts)`,
      ).to.deep.equal([]);
    });
  }

  it('reads the mirror rule as intended', () => {
    expect(candidates('src', 'services/knowledge/documents/chunking')).to.include(
      'src/services/knowledge/documents/chunking.ts',
    );
    expect(candidates('src', 'config.models')).to.include.members(['src/config.ts', 'src/config/index.ts']);
    expect(candidates('workflows', 'execution-slot.concurrency')).to.include('workflows/execution-slot.ts');
    expect(candidates('workflows', 'index.replay')).to.include('workflows/index.ts');
    expect(candidates('activities', 'code-runs.answer-lost')).to.include('activities/code-runs.ts');
    // A test named by its scenario names a workflow of that name, which does not exist: it fails.
    expect(candidates('workflows', 'concurrency')).to.deep.equal([
      'workflows/concurrency.ts',
      'workflows/concurrency/index.ts',
    ]);
  });
});

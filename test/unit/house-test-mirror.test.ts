// Tests mirror the source: the unit test of src/<path>.ts is test/unit/<path>.test.ts, so a file's test is
// found from its path (docs/testing.md). A second test of the same file names its aspect after a dot:
// a `cgroups.v1` test beside the `cgroups` one would test the same source file. Only the house tests
// (test/unit/house-*.test.ts), which check the whole repository, name no source file.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../../..');
const UNIT = path.join(ROOT, 'test', 'unit');

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? testFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((file) => file.endsWith('.test.ts'));
}

/** The source files a test at `relative` (to test/unit, without `.test.ts`) may name. */
function candidates(relative: string): string[] {
  const dir = path.dirname(relative);
  const [name, aspect] = path.basename(relative).split('.', 2);
  const stems = [relative, ...(aspect ? [path.join(dir, name)] : [])];
  return stems.flatMap((stem) => [`src/${stem}.ts`, `src/${stem}/index.ts`]);
}

describe('house: tests mirror the source', () => {
  it('every test/unit file is named after the source file it tests', () => {
    const files = testFiles(UNIT).map((file) => path.relative(UNIT, file).split(path.sep).join('/'));
    expect(files.length).to.be.greaterThan(10);
    const orphans = files
      .filter((file) => !/^house-[^/]*\.test\.ts$/.test(file))
      .filter((file) => !candidates(file.slice(0, -'.test.ts'.length)).some((c) => fs.existsSync(path.join(ROOT, c))))
      .map((file) => `test/unit/${file}`);
    expect(orphans, 'unit tests that name no source file (src/<path>.ts → test/unit/<path>.test.ts)').to.deep.equal([]);
  });

  it('reads the mirror rule as intended', () => {
    expect(candidates('services/knowledge/documents/chunking')).to.include(
      'src/services/knowledge/documents/chunking.ts',
    );
    expect(candidates('config.models')).to.include.members(['src/config.ts', 'src/config/index.ts']);
  });
});

// Which pasta runs use: an explicit one as given, the pinned build only when no other user could replace it
// (the file, its link's target, every directory above), else the system's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  PASST_BUILD,
  pastaProgram,
  pinnedPastaPath,
  replaceableBy,
} from '../../../../src/runtime/sandbox/pasta-program';
import { findTool } from '../../../../src/runtime/process/confine';

describe('pasta program', function () {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pasta-program-'));
    fs.chmodSync(dir, 0o755);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('finds nobody else able to replace a program of a closed directory, but does a group-writable one', function () {
    const program = path.join(dir, 'passt');
    fs.writeFileSync(program, '', { mode: 0o755 });
    fs.symlinkSync('passt', path.join(dir, 'pasta'));
    expect(replaceableBy(path.join(dir, 'pasta'))).to.equal(undefined);
    fs.chmodSync(dir, 0o775);
    expect(replaceableBy(path.join(dir, 'pasta'))).to.equal(`${dir} is writable by its group or others`);
    fs.chmodSync(dir, 0o755);
    fs.chmodSync(program, 0o757);
    expect(replaceableBy(path.join(dir, 'pasta'))).to.equal(`${program} is writable by its group or others`);
    expect(replaceableBy(path.join(dir, 'absent'))).to.match(/does not exist/);
  });

  it('takes SANDBOX_PASTA as given, else the pinned build where it is, else the system pasta', function () {
    expect(pastaProgram({ pasta: '/opt/pasta', toolsCacheDir: dir })).to.equal('/opt/pasta');
    const pinned = pinnedPastaPath(dir);
    const expected = fs.existsSync(pinned) && !replaceableBy(pinned) ? pinned : findTool('pasta');
    expect(pastaProgram({ pasta: undefined, toolsCacheDir: dir })).to.equal(expected);
  });

  it('looks for the build that tools/obtain-passt.sh makes (its version and our patches)', function () {
    const script = fs.readFileSync(path.join(__dirname, '../../../../../tools/obtain-passt.sh'), 'utf8');
    const version = /^VERSION=(\S+)/m.exec(script)?.[1];
    const build = /^BUILD="\$VERSION(\S*)"/m.exec(script)?.[1];
    expect(`${version}${build}`).to.equal(PASST_BUILD);
    expect(pinnedPastaPath(dir)).to.match(new RegExp(`/passt-${PASST_BUILD}/pasta$`));
  });
});

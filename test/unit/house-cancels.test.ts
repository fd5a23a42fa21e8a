// The house rule of cancels: every cancel goes through the job kernel. Only src/jobs/cancel.ts sends a job's
// `cancel` signal (signalCancel, cancelAndWait, stopOpen); the workflows (workflows/) handle it and
// src/temporal/contracts.ts defines it. This scans the sources for any other use of `cancelRunSignal`.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../../..');
const SCANNED = ['src', 'activities', 'workflows'];
const ALLOWED = ['src/jobs/cancel.ts', 'src/temporal/contracts.ts', 'workflows/'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return e.isFile() && /\.(ts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

describe('house: cancels', () => {
  it('sends the cancel signal only from the job kernel (src/jobs/cancel.ts)', () => {
    const files = SCANNED.flatMap(sourceFiles);
    expect(files.length).to.be.greaterThan(50);
    const senders = files.filter(
      (f) =>
        !ALLOWED.some((a) => f.startsWith(a)) &&
        /\bcancelRunSignal\b|signal\(\s*['"]cancel['"]/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')),
    );
    expect(senders, 'cancel signals sent outside the job kernel: use src/jobs/cancel.ts').to.deep.equal([]);
    const kernel = fs.readFileSync(path.join(ROOT, 'src/jobs/cancel.ts'), 'utf8');
    expect(kernel, 'the kernel is where the signal is sent').to.match(/\.signal\(cancelRunSignal/);
  });
});

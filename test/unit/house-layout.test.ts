// The services map (docs/architecture.md): every domain file lives in its wing (src/services/code/,
// accounts/, storage/, ...); only the helpers every wing shares stay at the root of src/services/. A new
// file at the root is a domain file that lost its wing, or a shared helper this list must be told about.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { REPO_ROOT } from '../support/house';

/** The cross-cutting helpers: who is calling (caller), rows to records (record-fields), the providers' words. */
const SERVICES_ROOT_FILES = ['caller.ts', 'provider-words.ts', 'record-fields.ts'];

describe('the house: the layout of src/services', () => {
  const entries = fs.readdirSync(path.join(REPO_ROOT, 'src', 'services'), { withFileTypes: true });

  it('has no loose file at its root but the shared helpers', () => {
    const loose = entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name);
    expect(loose.filter((name) => !SERVICES_ROOT_FILES.includes(name))).to.deep.equal(
      [],
      'domain files belong in a wing (src/services/<wing>/): move them, or add a shared helper to SERVICES_ROOT_FILES',
    );
  });

  it('still has each helper the list names (a list that names a moved file is stale)', () => {
    const present = new Set(entries.map((entry) => entry.name));
    expect(SERVICES_ROOT_FILES.filter((name) => !present.has(name))).to.deep.equal([]);
  });
});

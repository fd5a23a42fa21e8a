// pythonVenv's failures: a machine without a usable python3 fails loudly, naming what is missing (the
// compat suite never skips silently). Its success path is what the compat suite runs on.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { pythonVenv } from './python-venv';

async function failureOf(env: Record<string, string | undefined>): Promise<Error> {
  const saved = { ...process.env };
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-venv-test-'));
  Object.assign(process.env, { TARMAC_CACHE_DIR: cache });
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    await pythonVenv(`failing-${Math.random()}`, ['pytest']);
  } catch (err) {
    return err as Error;
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    fs.rmSync(cache, { recursive: true, force: true });
  }
  throw new Error('pythonVenv succeeded');
}

describe('pythonVenv', () => {
  it('fails naming TARMAC_PYTHON when the chosen interpreter does not run', async () => {
    const err = await failureOf({ TARMAC_PYTHON: '/nonexistent/python3' });
    expect(err.message).to.equal('TARMAC_PYTHON=/nonexistent/python3 does not run');
  });

  it('fails saying python3 is missing on a machine without one', async () => {
    const err = await failureOf({ TARMAC_PYTHON: undefined, PATH: '/nonexistent', PYENV_ROOT: '/nonexistent' });
    expect(err.message).to.match(/^python3 was not found: the compat suite needs Python 3/);
  });
});

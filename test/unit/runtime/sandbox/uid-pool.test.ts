// The uid pool: a uid is leased to one run at a time, and an ended run's uid, held until the batched check of
// /proc shows none of its processes, is checked at once when the range is otherwise full.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { UidPool } from '../../../../src/runtime/sandbox/uid-pool';
import { rejectionOf } from '../../../support/sources';

// Far from the uids the stack's runs lease (SANDBOX_UID_BASE) and from the other sandbox unit tests'.
const BASE = 297_990;

describe('uid pool', function () {
  let stateDir: string;
  beforeEach(() => (stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'uid-pool-'))));
  afterEach(() => fs.rmSync(stateDir, { recursive: true, force: true }));

  it('leases each uid once; a full range checks the ended runs waiting for their batch at once', async function () {
    const pool = new UidPool(stateDir, BASE, 1);
    const first = await pool.lease();
    expect(first.uid).to.equal(BASE);
    expect(pool.isLeased(BASE)).to.equal(true);
    const released = first.release({ groupEmptied: true }); // its check may wait 5 s for a batch
    const start = Date.now();
    const second = await pool.lease();
    expect(second.uid).to.equal(BASE);
    expect(Date.now() - start).to.be.below(4_000);
    await released;
    expect((await rejectionOf(pool.lease())).message).to.match(/every sandbox uid .* is in use/);
    await second.release();
    expect(pool.isLeased(BASE)).to.equal(false);
  });
});

// The uid pool: a uid is leased to one run at a time, and an ended run's uid, held until the batched check of
// /proc shows none of its processes, is checked at once when the range is otherwise full. A dead lessee's uid is
// reclaimed by one worker only, and a pid the kernel reused does not keep a dead lessee's uid.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
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

  /** A pid no process has now: a child that has exited and been reaped. */
  const deadPid = () => spawnSync('true').pid!;

  it("reclaims a dead lessee's uid for one of two workers that find it at once, never both", async function () {
    const workers = [new UidPool(stateDir, BASE, 1), new UidPool(stateDir, BASE, 1)];
    for (let attempt = 0; attempt < 5; attempt++) {
      fs.writeFileSync(path.join(stateDir, 'uids', String(BASE)), `${deadPid()} 12345`);
      const leases = await Promise.allSettled(workers.map((w) => w.lease()));
      const taken = leases.filter((l) => l.status === 'fulfilled');
      expect(taken, 'leases of the one uid').to.have.length(1);
      expect((leases.find((l) => l.status === 'rejected') as PromiseRejectedResult).reason.message).to.match(
        /every sandbox uid .* is in use/,
      );
      expect(workers[0].isLeased(BASE)).to.equal(true);
      await (taken[0] as PromiseFulfilledResult<{ release(): Promise<void> }>).value.release();
    }
    expect(fs.readdirSync(path.join(stateDir, 'uids')), 'no lock or temporary file left').to.deep.equal([]);
  });

  it("takes a uid whose lock names a live pid of another process than the lessee's (the pid was reused)", async function () {
    const pool = new UidPool(stateDir, BASE, 1);
    const lock = path.join(stateDir, 'uids', String(BASE));
    fs.writeFileSync(lock, `${process.pid} 1`); // this process, but not started at tick 1: the lessee is gone
    expect(pool.isLeased(BASE)).to.equal(false);
    const lease = await pool.lease();
    expect(pool.isLeased(BASE)).to.equal(true);
    expect(fs.readFileSync(lock, 'utf8')).to.match(new RegExp(`^${process.pid} \\d+$`));
    expect((await rejectionOf(new UidPool(stateDir, BASE, 1).lease())).message).to.match(/in use/);
    await lease.release();
  });

  it("frees at once the uids of every worker that is gone, and keeps a live lessee's", async function () {
    const pool = new UidPool(stateDir, BASE, 10);
    const live = await pool.lease();
    const dir = path.join(stateDir, 'uids');
    const gone = [1, 2, 3].map((i) => BASE + ((live.uid - BASE + i) % 10));
    for (const uid of gone) fs.writeFileSync(path.join(dir, String(uid)), `${deadPid()} 99`);
    fs.writeFileSync(path.join(dir, `${gone[0]}.half.tmp`), '');
    fs.utimesSync(path.join(dir, `${gone[0]}.half.tmp`), new Date(0), new Date(0));
    expect(await pool.reclaimGone()).to.equal(3);
    expect(fs.readdirSync(dir)).to.deep.equal([String(live.uid)]);
    expect(pool.isLeased(live.uid)).to.equal(true);
    await live.release();
  });
});

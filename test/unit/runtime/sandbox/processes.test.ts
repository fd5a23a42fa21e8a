// The uid sweep on this host's real /proc (the tests run as root, so they start processes as other uids): it
// finds a uid's processes and not zombies, kills them before it answers, serves several uids with one read,
// and a check that may wait for its batch still reports and kills what it finds, and is woken by an urgent one or a flush.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { processesOfUids, ProcessSweeper } from '../../../../src/runtime/sandbox/processes';
import { processAlive } from '../../../harness/runs';

// Far from the uids the stack's runs lease (SANDBOX_UID_BASE) and from cgroups.test.ts's.
let uid = 298_990;

const started: ChildProcess[] = [];

/** A process running as `asUid` (a sleep that would outlive the test). */
function sleeper(asUid: number): number {
  const child = spawn('sleep', ['60'], { uid: asUid, gid: asUid, stdio: 'ignore' });
  started.push(child);
  return child.pid!;
}

/** Resolves once `pid` is gone or a zombie (reaped by this process's child handling). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!processAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('uid sweep (processes)', function () {
  afterEach(() => {
    for (const child of started.splice(0)) child.kill('SIGKILL');
  });

  it('finds the processes of the uids asked about, and not a zombie', async function () {
    const a = ++uid;
    const b = ++uid;
    const pidA = sleeper(a);
    const pidB = sleeper(b);
    // A zombie of uid b: a child that exits under a parent that then execs sleep, which never reaps it.
    const parent = spawn('sh', ['-c', '(exit 0) & exec sleep 60'], { uid: b, gid: b, stdio: 'ignore' });
    started.push(parent);
    await new Promise((r) => setTimeout(r, 200));
    const found = await processesOfUids(new Set([a, b]));
    expect(found.get(a)).to.deep.equal([pidA]);
    expect(found.get(b)).to.have.members([pidB, parent.pid!]); // not the zombie child
    expect((await processesOfUids(new Set([++uid]))).size).to.equal(0);
  });

  it('kills every process of a uid before it answers, one read for several uids', async function () {
    const a = ++uid;
    const b = ++uid;
    const pids = [sleeper(a), sleeper(a), sleeper(b)];
    const sweeper = new ProcessSweeper();
    await Promise.all([sweeper.kill(a), sweeper.kill(b)]);
    for (const pid of pids) expect(await gone(pid), `pid ${pid}`).to.equal(true);
    expect((await processesOfUids(new Set([a, b]))).size).to.equal(0);
  });

  it('a batched check waits for its batch, reports what it finds as strays and kills them', async function () {
    const a = ++uid;
    const pid = sleeper(a);
    const strays: Array<[number, number[]]> = [];
    const sweeper = new ProcessSweeper({ onStray: (u, p) => strays.push([u, p]) });
    const start = Date.now();
    await sweeper.kill(a, { batchMs: 400 });
    expect(Date.now() - start).to.be.at.least(390);
    expect(strays).to.deep.equal([[a, [pid]]]);
    expect(await gone(pid)).to.equal(true);
  });

  it('an urgent check wakes a sweep waiting for a batch, and the one read serves both', async function () {
    const batched = ++uid;
    const urgent = ++uid;
    const pid = sleeper(urgent);
    const strays: number[] = [];
    const sweeper = new ProcessSweeper({ onStray: (u) => strays.push(u) });
    let batchedDone = 0;
    const waiting = sweeper.kill(batched, { batchMs: 60_000 }).then(() => (batchedDone = Date.now()));
    await new Promise((r) => setTimeout(r, 50));
    const start = Date.now();
    await sweeper.kill(urgent);
    expect(Date.now() - start).to.be.below(5_000);
    expect(await gone(pid)).to.equal(true);
    await waiting;
    expect(batchedDone - start).to.be.below(5_000); // answered by the urgent check's read, not after 60 s
    expect(strays).to.deep.equal([]); // the urgent uid was not expected empty
  });

  it('flush reads /proc now for the uids waiting for their batch (the worker stops)', async function () {
    const a = ++uid;
    const pid = sleeper(a);
    const strays: number[] = [];
    const sweeper = new ProcessSweeper({ onStray: (u) => strays.push(u) });
    const waiting = sweeper.kill(a, { batchMs: 60_000 });
    await new Promise((r) => setTimeout(r, 50));
    const start = Date.now();
    await sweeper.flush();
    await waiting;
    expect(Date.now() - start).to.be.below(5_000);
    expect(strays).to.deep.equal([a]);
    expect(await gone(pid)).to.equal(true);
    await sweeper.flush(); // nothing waiting: at once
  });
});

// The pool of limited threads (src/runtime/threads/thread-pool.ts) with a thread script of the test's own: a
// task's answer and its typed failure, questions answered from the pool's side, a thread that exhausts its heap
// or runs past its time ends alone while the process and the next task go on, an abort stops a task (queued or
// running), tasks past the pool's size wait their turn, and one key's tasks leave a thread to another key's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ThreadLimitExceeded, ThreadPool, ThreadTaskFailed } from '../../../../src/runtime/threads/thread-pool';

const THREAD_SIDE = require.resolve('../../../../src/runtime/threads/thread-side');

/**
 * The thread: `echo` answers its input, `ask` asks twice and sums, `fail` throws a typed error, `hog` fills its
 * heap, `spin` never ends, `sleep` answers after `ms`.
 */
const SCRIPT = `
const { serveThreadTasks } = require(${JSON.stringify(THREAD_SIDE)});
serveThreadTasks(async (input, ask) => {
  if (input.op === 'echo') return input.value;
  if (input.op === 'ask') return (await ask(1)) + (await ask(2));
  if (input.op === 'fail') throw Object.assign(new Error('no good'), { type: 'Refused' });
  if (input.op === 'hog') { const kept = []; for (;;) kept.push(new Array(100000).fill({ x: kept.length })); }
  if (input.op === 'spin') for (;;);
  if (input.op === 'sleep') return new Promise((r) => setTimeout(() => r(input.value), input.ms));
});`;

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('resolved');
    },
    (e: Error) => e,
  );
}

describe('a pool of limited threads', () => {
  let dir: string;
  let pool: ThreadPool;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'thread-pool-'));
    fs.writeFileSync(path.join(dir, 'thread.js'), SCRIPT);
    pool = new ThreadPool({ script: path.join(dir, 'thread.js'), size: 2, heapMb: 64, idleMs: 500 });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("answers a task's result, and its failure with the error's type", async () => {
    expect(await pool.run({ op: 'echo', value: { a: [1, 2] } })).to.deep.equal({ a: [1, 2] });
    const err = await rejection(pool.run({ op: 'fail' }));
    expect(err).to.be.instanceOf(ThreadTaskFailed).and.include({ type: 'Refused', message: 'no good' });
  });

  it("answers the thread's questions from the caller's side", async () => {
    const asked: unknown[] = [];
    const sum = await pool.run({ op: 'ask' }, { answer: async (q) => (asked.push(q), { value: (q as number) * 10 }) });
    expect(sum).to.equal(30);
    expect(asked).to.deep.equal([1, 2]);
  });

  it('ends a thread that exhausts its heap, alone: the process and the next task go on', async () => {
    const err = await rejection(pool.run({ op: 'hog' }));
    expect(err).to.be.instanceOf(ThreadLimitExceeded).and.include({ limit: 'memory' });
    expect(err.message).to.equal('it used more than its memory limit of 64 MB');
    expect(await pool.run({ op: 'echo', value: 'after' })).to.equal('after');
  });

  it('ends a task past its time limit, and one whose signal aborts', async () => {
    const late = await rejection(pool.run({ op: 'spin' }, { timeoutMs: 200 }));
    expect(late).to.be.instanceOf(ThreadLimitExceeded).and.include({ limit: 'time' });
    const ac = new AbortController();
    const stopped = rejection(pool.run({ op: 'spin' }, { signal: ac.signal }));
    setTimeout(() => ac.abort(new Error('cancelled')), 100);
    expect((await stopped).message).to.equal('cancelled');
    expect(await pool.run({ op: 'echo', value: 'still' })).to.equal('still');
  });

  it('queues tasks past its size, and drops a queued task whose signal aborts', async () => {
    const ac = new AbortController();
    const busy = [pool.run({ op: 'spin' }, { timeoutMs: 300 }), pool.run({ op: 'spin' }, { timeoutMs: 300 })];
    const queued = pool.run({ op: 'echo', value: 'queued' });
    const dropped = rejection(pool.run({ op: 'echo', value: 'never' }, { signal: ac.signal }));
    ac.abort(new Error('dropped'));
    expect((await dropped).message).to.equal('dropped');
    for (const b of busy) expect(await rejection(b)).to.include({ limit: 'time' });
    expect(await queued).to.equal('queued');
  });

  it("lets one key hold at most maxPerKey threads while another key's task waits", async () => {
    const fair = new ThreadPool({ script: path.join(dir, 'thread.js'), size: 2, heapMb: 64, maxPerKey: 1 });
    const ended: string[] = [];
    const run = (key: string, value: string) =>
      fair.run({ op: 'sleep', ms: 300, value }, { key }).then((v) => void ended.push(v as string));
    const all = [run('a', 'a1'), run('a', 'a2'), run('b', 'b1')];
    await Promise.all(all);
    // a2 waited for a1's thread; b1 took the other thread at once.
    expect(ended.indexOf('b1')).to.be.below(ended.indexOf('a2'));
    expect(ended[ended.length - 1]).to.equal('a2');
  });
});

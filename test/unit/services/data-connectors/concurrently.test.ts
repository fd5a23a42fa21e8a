// The data plane's pool (src/services/data-connectors/concurrently.ts): at most `limit` works at a time, every
// result once; the pool refills while the consumer is busy, up to `waitingAtMost` results waiting; a failure
// (of a work or of the source) stops the starts and is thrown once the started works have ended; a consumer
// that stops early gets control back only once they have ended, and the source is closed.
import { expect } from 'chai';
import { forEachConcurrently, mapConcurrently } from '../../../../src/services/data-connectors/concurrently';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A work that takes `ms(item)` and counts what runs. */
function tracked<T>(ms: (item: T) => number, fails?: (item: T) => boolean) {
  const state = { running: 0, most: 0, started: 0, ended: 0 };
  const work = async (item: T) => {
    state.started++;
    state.running++;
    state.most = Math.max(state.most, state.running);
    try {
      await sleep(ms(item));
      if (fails?.(item)) throw new Error(`item ${String(item)} failed`);
      return item;
    } finally {
      state.running--;
      state.ended++;
    }
  };
  return { state, work };
}

async function* listed(count: number, state: { taken: number; closed: boolean }, failAt = Infinity) {
  try {
    for (let i = 0; i < count; i++) {
      if (i === failAt) throw new Error('the source failed');
      state.taken++;
      yield i;
    }
  } finally {
    state.closed = true;
  }
}

describe('mapConcurrently and forEachConcurrently', () => {
  it('runs at most `limit` works at a time and yields every result once', async () => {
    const { state, work } = tracked((i: number) => (i * 7) % 11);
    const results: number[] = [];
    for await (const r of mapConcurrently([...Array(30).keys()], 4, work)) results.push(r);
    expect(results.sort((a, b) => a - b)).to.deep.equal([...Array(30).keys()]);
    expect(state.most).to.equal(4);
  });

  it('refills while the consumer is busy, up to `waitingAtMost` results waiting', async () => {
    const { state, work } = tracked(() => 5);
    const source = { taken: 0, closed: false };
    const results = mapConcurrently(listed(100, source), 2, work, 4);
    expect((await results.next()).value).to.be.a('number');
    await sleep(200); // the consumer is busy
    // Taken: the result in hand, up to 4 waiting, up to 2 more that ended past the bound; nothing more.
    expect(state.started).to.be.within(1 + 4, 1 + 4 + 2);
    expect(source.taken).to.equal(state.started);
    await results.return(undefined);
    expect(source.closed).to.equal(true);
  });

  it('stops starting at a failed work and throws its error once the started ones have ended', async () => {
    const { state, work } = tracked(
      (i: number) => (i === 0 ? 10 : 100),
      (i) => i === 0,
    );
    const source = { taken: 0, closed: false };
    let err: Error | undefined;
    await forEachConcurrently(listed(10, source), 2, async (i) => void (await work(i))).catch((e) => (err = e));
    expect(err?.message).to.equal('item 0 failed');
    expect(state).to.deep.include({ started: 2, ended: 2, running: 0 });
    expect(source.closed).to.equal(true);
  });

  it("throws the source's failure once the started works have ended", async () => {
    const { state, work } = tracked(() => 50);
    const source = { taken: 0, closed: false };
    let err: Error | undefined;
    await forEachConcurrently(listed(10, source, 3), 8, async (i) => void (await work(i))).catch((e) => (err = e));
    expect(err?.message).to.equal('the source failed');
    expect(state).to.deep.include({ started: 3, ended: 3, running: 0 });
  });

  it('returns to a consumer that stops early once the started works have ended', async () => {
    const { state, work } = tracked((i: number) => (i === 0 ? 1 : 80));
    const source = { taken: 0, closed: false };
    for await (const r of mapConcurrently(listed(10, source), 3, work)) {
      expect(r).to.equal(0);
      break;
    }
    expect(state.running).to.equal(0);
    expect(state.ended).to.equal(state.started);
    expect(source.closed).to.equal(true);
  });
});

// The shared reader of a run's events (src/api/sse/run-feeds.ts): every stream gets each event once, in
// order, from its own cursor; a stream that cannot keep up is dropped without holding back the others; all
// end once the run is terminal and everything was sent, with the final status (the end comment); a dropped one without.
import { expect } from 'chai';
import type { RunEvent } from '../../src/persistence/entities';
import { Run } from '../../src/persistence/entities';
import { appendEvents, transitionRun } from '../../src/services/code/runs/state';
import { FeedStream, RunFeeds } from '../../src/api/sse/run-feeds';
import { createLogger } from '../../src/logger';
import { aRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

interface Collected extends FeedStream {
  seqs: number[];
  ended: boolean;
  /** The final status the stream was ended with (its end comment), if any. */
  finalStatus?: string;
}

function collector(cursor: number, opts: { acceptFrames?: number } = {}): Collected {
  const s: Collected = {
    cursor,
    seqs: [],
    ended: false,
    frame: (e: RunEvent) => `id: ${e.seq}\n`,
    write(text: string) {
      if (opts.acceptFrames !== undefined && s.seqs.length >= opts.acceptFrames) {
        s.end(); // as a client too far behind is: ended, to resume with Last-Event-ID
        return false;
      }
      s.seqs.push(Number(/id: (\d+)/.exec(text)![1]));
      return true;
    },
    end(finalStatus) {
      s.ended = true;
      s.finalStatus = finalStatus;
    },
  };
  return s;
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check(), what).to.equal(true);
};

describe('event feeds (one reader per run per api process)', () => {
  it('gives each stream every event once from its own cursor, drops a stalled one, and ends all when the run ends', async () => {
    const { ds } = getStack();
    const t = await newTenant();
    const run = await ds.getRepository(Run).save(aRun({ kind: 'chat', organization_id: t.organizationId }));
    const post = (n: number) =>
      ds.transaction((em) =>
        appendEvents(
          em,
          run.run_id,
          Array.from({ length: n }, () => ({ type: 'UserEvent', origin: 'USER' as const, payload: {} })),
        ),
      );
    await post(5);
    const feeds = new RunFeeds(ds, createLogger('silent', 'test'), undefined, { keepAliveMs: 60_000, recheckMs: 30 });
    const fromStart = collector(0);
    const resumed = collector(3);
    const stalled = collector(0, { acceptFrames: 2 });
    for (const s of [fromStart, resumed, stalled]) {
      const detach = feeds.attach(run.run_id, s);
      const end = s.end;
      s.end = (finalStatus) => {
        end(finalStatus);
        detach(); // as the response's close does
      };
    }
    expect(feeds.size).to.equal(1);

    await until(() => fromStart.seqs.length === 5 && resumed.seqs.length === 2, 'the first five events');
    await post(600); // more than one read's batch
    await until(() => fromStart.seqs.length === 605, 'all 605 events');
    expect(fromStart.seqs).to.deep.equal(Array.from({ length: 605 }, (_, i) => i + 1));
    expect(resumed.seqs).to.deep.equal(Array.from({ length: 602 }, (_, i) => i + 4));
    expect(stalled.seqs).to.deep.equal([1, 2]);
    expect(stalled.ended).to.equal(true);
    expect(stalled.finalStatus).to.equal(undefined); // dropped, not ended: no end comment
    expect(fromStart.ended || resumed.ended).to.equal(false);

    await ds.transaction(async (em) => {
      await transitionRun(em, run.run_id, 'CANCELLED');
      await appendEvents(em, run.run_id, [{ type: 'StructureRunCancelled', origin: 'SYSTEM', payload: {} }]);
    });
    await until(() => fromStart.ended && resumed.ended, 'both streams ended');
    expect(fromStart.seqs.at(-1)).to.equal(606);
    expect(resumed.seqs.at(-1)).to.equal(606);
    // Ended with the final status (the end comment), after the last event.
    expect([fromStart.finalStatus, resumed.finalStatus]).to.deep.equal(['CANCELLED', 'CANCELLED']);
    expect(feeds.size).to.equal(0);
  });
});

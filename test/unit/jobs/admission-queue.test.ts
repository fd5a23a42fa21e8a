// Who gets the free execution slots (src/jobs/admission-queue.ts): the organization's share, a resource's
// limit per key and total limit, a paused resource, round-robin across keys, and runs in their parent's slot.
import { expect } from 'chai';
import { chooseGrants, Holdings, type ResourceLimits, type Waiter } from '../../../src/jobs/admission-queue';

const waiter = (jobId: string, resourceId: string | null = null, key: string | null = null): Waiter => ({
  kind: 'run',
  jobId,
  workflowId: `structure-run-${jobId}`,
  resourceId,
  key,
});
const ids = (ws: Waiter[]) => ws.map((w) => w.jobId);
const limits = (entries: Record<string, ResourceLimits>) => new Map(Object.entries(entries));

describe('admission queue: who is granted', () => {
  it('grants in order up to the organization share', () => {
    const held = new Holdings();
    held.add(null, null);
    expect(ids(chooseGrants([waiter('a'), waiter('b'), waiter('c')], held, new Map(), 3))).to.deep.equal(['a', 'b']);
    expect(held.total).to.equal(3);
  });

  it('holds a key at its limit back and lets the next key go', () => {
    const held = new Holdings();
    held.add('r', 'k1');
    const queue = [waiter('a', 'r', 'k1'), waiter('b', 'r', 'k2'), waiter('c', 'r', 'k1')];
    expect(ids(chooseGrants(queue, held, limits({ r: { perKey: 1, paused: false } }), 10))).to.deep.equal(['b']);
  });

  it('takes the least-served key first: a busy key does not starve the others', () => {
    const queue = [
      waiter('a1', 'r', 'a'),
      waiter('a2', 'r', 'a'),
      waiter('a3', 'r', 'a'),
      waiter('b1', 'r', 'b'),
      waiter('c1', 'r', 'c'),
    ];
    const granted = chooseGrants(queue, new Holdings(), limits({ r: { perKey: 5, total: 3, paused: false } }), 10);
    expect(ids(granted)).to.deep.equal(['a1', 'b1', 'c1']);
  });

  it('keeps the total limit of a resource across its keys', () => {
    const held = new Holdings();
    held.add('r', 'x');
    held.add('r', 'y');
    const queue = [waiter('a', 'r', 'z'), waiter('b', 'r', 'w'), waiter('c', 'other', null)];
    const granted = chooseGrants(queue, held, limits({ r: { perKey: 1, total: 3, paused: false } }), 10);
    expect(ids(granted)).to.deep.equal(['a', 'c']);
  });

  it('starts nothing of a paused resource', () => {
    const queue = [waiter('a', 'r', null), waiter('b', 's', null)];
    expect(ids(chooseGrants(queue, new Holdings(), limits({ r: { paused: true } }), 10))).to.deep.equal(['b']);
  });

  it("grants a run an assistant run calls in its parent's slot on a full organization, its resource's limit kept", () => {
    const held = new Holdings();
    held.add('assistant', '', 1); // the assistant run: the organization's one slot
    const call = (jobId: string) => ({ ...waiter(jobId, 's', ''), inParentSlot: true });
    const queue = [waiter('next-assistant-run', 'assistant', ''), call('c1'), call('c2')];
    const granted = chooseGrants(queue, held, limits({ s: { perKey: 1, paused: false } }), 1);
    expect(ids(granted)).to.deep.equal(['c1']);
    expect(held.total).to.equal(1);
    expect(held.ofKey('s', '')).to.equal(1);
  });
});

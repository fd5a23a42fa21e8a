// Who gets the free execution slots of an organization (src/jobs/admission.ts), as a pure function of its
// queue: the organization's share, and for runs of a resource that declares `concurrency`, its limit per
// key and its total limit; a paused resource starts nothing. Waiters go in order of creation, except that
// among the waiters of one resource with concurrency the least-served key goes first (round-robin across
// keys: a key with many queued runs does not starve the others), oldest first within a key. A run an assistant
// run calls executes in its parent's slot: its resource's limits apply to it, the organization's share does not
// (the parent holds a slot of it already, and waits for the call: counting the call again could deadlock).

/**
 * A job waiting for a slot. `resourceId`: runs of structures, functions, tools and assistants; `key` when it
 * declares concurrency; `inParentSlot`: a run an assistant run calls.
 */
export interface Waiter {
  kind: string;
  jobId: string;
  workflowId: string;
  resourceId: string | null;
  key: string | null;
  inParentSlot?: boolean;
}

/** What a resource allows at once; absent members do not limit. */
export interface ResourceLimits {
  perKey?: number;
  total?: number;
  paused: boolean;
}

/** What holds slots now: all of the organization's, per resource, per resource and key. */
export class Holdings {
  total = 0;
  private readonly counts = new Map<string, number>();

  static keyOf = (resourceId: string, key: string) => `${resourceId}\u0000${key}`;

  /** `inParentSlot`: counted for its resource and key only (its parent's slot is the organization's). */
  add(resourceId: string | null, key: string | null, n = 1, inParentSlot = false): void {
    if (!inParentSlot) this.total += n;
    if (!resourceId) return;
    this.bump(resourceId, n);
    if (key !== null) this.bump(Holdings.keyOf(resourceId, key), n);
  }

  ofResource = (resourceId: string) => this.counts.get(resourceId) ?? 0;
  ofKey = (resourceId: string, key: string) => this.counts.get(Holdings.keyOf(resourceId, key)) ?? 0;

  private bump(id: string, n: number) {
    this.counts.set(id, (this.counts.get(id) ?? 0) + n);
  }
}

/** What a waiter waits for (besides its turn): undefined when only the organization's share could hold it. */
export type Blocker = 'paused' | 'key' | 'resource';

export function blockerOf(
  w: Waiter,
  holdings: Holdings,
  limits: ReadonlyMap<string, ResourceLimits>,
): Blocker | undefined {
  const l = w.resourceId ? limits.get(w.resourceId) : undefined;
  if (!l || !w.resourceId) return undefined;
  if (l.paused) return 'paused';
  if (l.total !== undefined && holdings.ofResource(w.resourceId) >= l.total) return 'resource';
  if (l.perKey !== undefined && w.key !== null && holdings.ofKey(w.resourceId, w.key) >= l.perKey) return 'key';
  return undefined;
}

/**
 * The waiters (in creation order) to grant, at most `orgLimit` holding in all. `holdings` is updated with
 * the grants, so that it answers for the queue as it is afterwards.
 */
export function chooseGrants(
  waiters: readonly Waiter[],
  holdings: Holdings,
  limits: ReadonlyMap<string, ResourceLimits>,
  orgLimit: number,
): Waiter[] {
  const granted: Waiter[] = [];
  const remaining = [...waiters];
  const eligible = (w: Waiter) =>
    (w.inParentSlot || holdings.total < orgLimit) && blockerOf(w, holdings, limits) === undefined;
  for (;;) {
    const first = remaining.findIndex(eligible);
    if (first < 0) break;
    let pick = first;
    const head = remaining[first];
    if (head.resourceId && head.key !== null) {
      const served = (w: Waiter) => holdings.ofKey(w.resourceId!, w.key!);
      for (let i = first + 1; i < remaining.length; i++) {
        const w = remaining[i];
        if (w.resourceId === head.resourceId && w.key !== null && served(w) < served(remaining[pick]) && eligible(w))
          pick = i;
      }
    }
    const [w] = remaining.splice(pick, 1);
    holdings.add(w.resourceId, w.key, 1, w.inParentSlot);
    granted.push(w);
  }
  return granted;
}

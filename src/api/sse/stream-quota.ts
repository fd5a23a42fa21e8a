// How many event streams one organization may hold open on one api process: every stream (a run's events, chat
// streams, run changes) counts against SSE_MAX_STREAMS_PER_ORG, and a run-changes stream (GET /api/runs/stream)
// also against SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG. Each stream holds a socket, its buffers and a place in a shared
// feed; a run-changes stream is also sent every run change of its organization, so its cost grows with the
// organization's whole traffic, and a client needs one per list it shows. Without the bounds one tenant's clients
// could take the process's file handles, memory and fan-out from every other organization's.
import type { Context } from 'koa';
import type { Deps } from '../deps';
import { tooManyRequests } from '../../errors';

/** What a client refused a stream waits before it tries again: other streams of its organization must end first. */
const RETRY_AFTER_SECONDS = 5;

/** The kinds of stream with a cap of their own (within the cap on all streams). */
export type StreamKind = 'events' | 'run-changes';

interface Cap {
  pool: string;
  max: number;
  variable: string;
  what: string;
}

const openByDeps = new WeakMap<Deps, Map<string, number>>();

/** The caps a stream of `kind` counts against. */
function capsOf(deps: Deps, kind: StreamKind): Cap[] {
  const { maxStreamsPerOrganization, maxRunChangeStreamsPerOrganization } = deps.config.sse;
  const all = {
    pool: 'all',
    max: maxStreamsPerOrganization,
    variable: 'SSE_MAX_STREAMS_PER_ORG',
    what: 'event streams',
  };
  if (kind === 'events') return [all];
  const changes = {
    pool: 'run-changes',
    max: maxRunChangeStreamsPerOrganization,
    variable: 'SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG',
    what: 'run-changes streams',
  };
  return [changes, all];
}

/**
 * Counts a new stream of `kind` of `organizationId` against its caps, or throws 429 (with Retry-After) when the
 * organization already holds its share of one; returns the release, to call once when the stream ends.
 */
export function admitStream(ctx: Context, deps: Deps, organizationId: string, kind: StreamKind = 'events'): () => void {
  let open = openByDeps.get(deps);
  if (!open) openByDeps.set(deps, (open = new Map()));
  const counts = open;
  const caps = capsOf(deps, kind);
  const keyOf = (cap: Cap) => `${cap.pool}\n${organizationId}`;
  const full = caps.find((cap) => (counts.get(keyOf(cap)) ?? 0) >= cap.max);
  if (full) {
    ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    throw tooManyRequests(
      `This organization already holds ${full.max} open ${full.what} on this api process (${full.variable}); ` +
        `close one or retry in ${RETRY_AFTER_SECONDS} s`,
    );
  }
  for (const cap of caps) counts.set(keyOf(cap), (counts.get(keyOf(cap)) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const cap of caps) {
      const left = (counts.get(keyOf(cap)) ?? 1) - 1;
      if (left > 0) counts.set(keyOf(cap), left);
      else counts.delete(keyOf(cap));
    }
  };
}

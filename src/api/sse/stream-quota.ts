// How many event streams one organization may hold open on one api process (SSE_MAX_STREAMS_PER_ORG). Each
// stream holds a socket, its buffers and a place in a shared feed; without a bound one tenant's clients could
// take the process's file handles and memory from every other organization's.
import type { Context } from 'koa';
import type { Deps } from '../deps';
import { tooManyRequests } from '../../errors';

/** What a client refused a stream waits before it tries again: other streams of its organization must end first. */
const RETRY_AFTER_SECONDS = 5;

const openByDeps = new WeakMap<Deps, Map<string, number>>();

/**
 * Counts a new stream of `organizationId` against the cap, or throws 429 (with Retry-After) when the
 * organization already holds its share; returns the release, to call once when the stream ends.
 */
export function admitStream(ctx: Context, deps: Deps, organizationId: string): () => void {
  let open = openByDeps.get(deps);
  if (!open) openByDeps.set(deps, (open = new Map()));
  const held = open.get(organizationId) ?? 0;
  const max = deps.config.sse.maxStreamsPerOrganization;
  if (held >= max) {
    ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
    throw tooManyRequests(
      `This organization already holds ${max} open event streams on this api process (SSE_MAX_STREAMS_PER_ORG); ` +
        `close one or retry in ${RETRY_AFTER_SECONDS} s`,
    );
  }
  open.set(organizationId, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (open.get(organizationId) ?? 1) - 1;
    if (left > 0) open.set(organizationId, left);
    else open.delete(organizationId);
  };
}

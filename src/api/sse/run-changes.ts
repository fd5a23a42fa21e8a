// An organization's run changes, live (GET /api/runs/stream): a frame with a run's summary whenever a run is
// created or changes status. One reader per organization per api process (shared-feed.ts), shared by its streams, woken by
// the notifications that name the organization (src/persistence/run-updates-hub.ts) and by a periodic
// re-check. It reads the runs by `updated_at` (the writer's transaction start, on the database's clock): a
// frame's id is that time in microseconds, and a stream resumes after it with Last-Event-ID. Since transactions
// commit out of the order they started in, every read looks CHANGE_OVERLAP_MS further back and a stream skips
// what it already sent; a resumed stream may so send a run again (a frame is the run's current summary, so
// that is harmless).
import type { Context } from 'koa';
import type { DataSource } from 'typeorm';
import type { Run } from '../../persistence/entities/run';
import type { RunUpdatesHub } from '../../persistence/run-updates-hub';
import type { Logger } from '../../logger';
import { SharedFeed, SharedFeeds, type FeedTimings } from './shared-feed';
import type { Deps } from '../deps';
import { openSse } from './sse-response';
import { admitStream } from './stream-quota';

/** How far back each read looks for changes committed after later ones (a transaction's start to its commit). */
export const CHANGE_OVERLAP_MS = 10_000;
const OVERLAP_US = CHANGE_OVERLAP_MS * 1000;
/** How far back a Last-Event-ID may resume. */
export const MAX_RESUME_MS = 3600_000;
/** Runs read per query. */
const BATCH = 500;

/** A run row with the microseconds of its `updated_at` (a JavaScript Date keeps milliseconds only). */
type ChangedRun = Run & { updated_us: string };

/** One stream of an organization's run changes, as its feed sees it. */
export interface ChangeStream {
  /** Microseconds since the epoch of the last change sent (or where the stream resumed). */
  cursor: number;
  /** The change (microseconds) of each run sent within the overlap: not sent again. */
  readonly sent: Map<string, number>;
  write(text: string): boolean;
  end(): void;
}

class OrganizationRunFeed extends SharedFeed<ChangeStream> {
  constructor(
    private readonly organizationId: string,
    private readonly kinds: readonly string[],
    private readonly present: (run: Run) => unknown,
    private readonly ds: DataSource,
    private readonly log: Logger,
    hub: RunUpdatesHub | undefined,
    timings: FeedTimings,
    onEmpty: () => void,
  ) {
    super(hub && ((listener) => hub.subscribeOrganization(organizationId, listener)), timings, onEmpty);
  }

  protected readFailed(err: unknown): void {
    this.log.warn(
      { err, organizationId: this.organizationId },
      'run changes read failed; retrying on the next wake-up',
    );
  }

  protected async read(readers: ChangeStream[]): Promise<void> {
    // Keyset pages in (updated_at, run_id) order from the lowest cursor, less the overlap.
    let after = { us: Math.min(...readers.map((s) => s.cursor)) - OVERLAP_US, runId: '' };
    for (;;) {
      // The plain bound on updated_at lets the (organization_id, updated_at) index narrow the scan.
      const rows: ChangedRun[] = await this.ds.query(
        `WITH since AS (SELECT timestamptz 'epoch' + $3::bigint * interval '1 microsecond' AS at)
         SELECT runs.*, (extract(epoch FROM updated_at) * 1000000)::bigint::text AS updated_us FROM runs, since
          WHERE organization_id = $1 AND kind = ANY($2::text[]) AND updated_at >= since.at
            AND (updated_at, run_id::text) > (since.at, $4)
          ORDER BY updated_at, run_id::text LIMIT ${BATCH}`,
        [this.organizationId, this.kinds, after.us, after.runId],
      );
      this.deliver(rows, readers);
      if (rows.length < BATCH) return;
      const last = rows[rows.length - 1];
      after = { us: Number(last.updated_us), runId: last.run_id };
    }
  }

  private deliver(rows: ChangedRun[], streams: ChangeStream[]): void {
    for (const s of streams) {
      if (!this.streams.has(s)) continue;
      for (const row of rows) {
        const us = Number(row.updated_us);
        if (us <= s.cursor - OVERLAP_US || (s.sent.get(row.run_id) ?? -1) >= us) continue;
        // The id never goes back: a change committed late resumes from the later one, less the overlap.
        const id = Math.max(s.cursor, us);
        if (!s.write(`id: ${id}\ndata: ${JSON.stringify(this.present(row))}\n\n`)) break;
        s.sent.set(row.run_id, us);
        s.cursor = id;
      }
      for (const [runId, us] of s.sent) if (us <= s.cursor - OVERLAP_US) s.sent.delete(runId);
    }
  }
}

/** The run-change feeds of one api process, by organization (the runs of `kinds`, framed by `present`). */
class OrganizationRunFeeds extends SharedFeeds<ChangeStream> {
  constructor(deps: Deps, kinds: readonly string[], present: (run: Run) => unknown) {
    super(
      (organizationId, onEmpty) =>
        new OrganizationRunFeed(
          organizationId,
          kinds,
          present,
          deps.ds,
          deps.log,
          deps.runUpdates,
          deps.config.sse,
          onEmpty,
        ),
    );
  }
}

const feedsByDeps = new WeakMap<Deps, OrganizationRunFeeds>();

/**
 * Sets up the response of `ctx` as the stream of `organizationId`'s run changes (runs of `kinds`, each frame's
 * data `present(run)`), after `afterUs` (a frame's id), else from now: the changes of the last CHANGE_OVERLAP_MS
 * come first, which covers a list read just before the stream was opened. A resume reaches back at most
 * MAX_RESUME_MS (a client away longer reads its lists again; an old id must not make every read scan history).
 */
export async function streamRunChanges(
  ctx: Context,
  deps: Deps,
  o: { organizationId: string; afterUs?: number; kinds: readonly string[]; present: (run: Run) => unknown },
): Promise<void> {
  const [now]: Array<{ us: string }> = await deps.ds.query(
    `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS us`,
  );
  const nowUs = Number(now.us);
  const cursor = o.afterUs === undefined ? nowUs : Math.max(o.afterUs, nowUs - MAX_RESUME_MS * 1000);
  // `kinds` and `present` are the route's constants: the process's feeds are made with them once.
  let feeds = feedsByDeps.get(deps);
  if (!feeds) feedsByDeps.set(deps, (feeds = new OrganizationRunFeeds(deps, o.kinds, o.present)));
  const release = admitStream(ctx, deps, o.organizationId, 'run-changes');
  let detach = () => undefined as void;
  const sse = openSse(ctx, {
    status: 200,
    comment: 'run changes',
    onEnd: () => {
      detach();
      release();
    },
  });
  detach = feeds.attach(o.organizationId, {
    cursor,
    sent: new Map(),
    write: sse.write,
    end: () => sse.end(),
  });
}

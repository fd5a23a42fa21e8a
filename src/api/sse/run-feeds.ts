// One reader per run per api process, shared by every event stream of that run in the process (on the frame
// of shared-feed.ts). A wake-up (NOTIFY through the hub, or the periodic re-check) costs two queries per run,
// not two per stream: the run's status, then its events after the lowest cursor of its streams; each stream gets the events past its
// own cursor. Streams never slow each other down: frames go into each socket's buffer at once, and a stream
// whose client does not read (more than MAX_BUFFERED_BYTES waiting) is ended; its client resumes with
// `Last-Event-ID` where it left off.
import type { DataSource } from 'typeorm';
import type { RunEvent } from '../../persistence/entities';
import type { RunStatus } from '../../persistence/entities/run';
import type { RunUpdatesHub } from '../../persistence/run-updates-hub';
import type { Logger } from '../../logger';
import { eventsAfter } from '../../services/code/runs/events';
import { isTerminal } from '../../services/code/runs/lifecycle';
import { SharedFeed, SharedFeeds, type FeedTimings } from './shared-feed';

/** Events read per query while catching up. */
const BATCH = 500;
/** Streams written to before the fan-out yields to the event loop. */
const DELIVERY_SLICE = 50;

/** One event stream, as its feed sees it. */
export interface FeedStream {
  /** The last event sequence sent (or skipped). */
  cursor: number;
  /** The frame of an event; the same function for streams of the same shape (rendered once per event). */
  frame: (e: RunEvent) => string;
  /** Writes `text`; false when the client is too slow and the stream was ended. */
  write(text: string): boolean;
  /**
   * Ends the stream. With `finalStatus` (the run ended and every event was sent) its end (comment) goes first; without
   * (the process shutting down, a client too slow) it just closes, which tells the client to resume.
   */
  end(finalStatus?: RunStatus): void;
}

class RunFeed extends SharedFeed<FeedStream> {
  constructor(
    private readonly runId: string,
    private readonly ds: DataSource,
    private readonly log: Logger,
    hub: RunUpdatesHub | undefined,
    timings: FeedTimings,
    onEmpty: () => void,
  ) {
    super(hub && ((listener) => hub.subscribe(runId, listener)), timings, onEmpty);
  }

  protected readFailed(err: unknown): void {
    this.log.warn({ err, runId: this.runId }, 'event stream read failed; retrying on the next wake-up');
  }

  // Status first, then events: a status seen terminal here was committed together with its last event, so
  // the events read afterwards include everything the run will ever have.
  protected async read(readers: FeedStream[]): Promise<'more' | void> {
    const from = Math.min(...readers.map((s) => s.cursor));
    const rows: Array<{ status: RunStatus }> = await this.ds.query(`SELECT status FROM runs WHERE run_id = $1`, [
      this.runId,
    ]);
    const batch = await eventsAfter(this.ds, this.runId, from, BATCH);
    const attached = readers.filter((s) => this.streams.has(s));
    await this.deliver(batch, attached);
    if (batch.length === BATCH) return 'more';
    if (!rows.length)
      for (const s of attached) s.end(); // deleted: a resume answers 404
    else if (isTerminal(rows[0].status)) for (const s of attached) s.end(rows[0].status); // all sent
  }

  // In slices of DELIVERY_SLICE streams, yielding to the event loop between them: writing one event to 500
  // sockets at once held the loop for ~20 ms (every other request waited); a slice takes a millisecond or two.
  private async deliver(batch: RunEvent[], streams: FeedStream[]): Promise<void> {
    if (!batch.length) return;
    const rendered = new Map<FeedStream['frame'], string[]>();
    const framesOf = (frame: FeedStream['frame']) => {
      let texts = rendered.get(frame);
      if (!texts) rendered.set(frame, (texts = batch.map(frame)));
      return texts;
    };
    const last = batch[batch.length - 1].seq;
    for (let i = 0; i < streams.length; i++) {
      if (i > 0 && i % DELIVERY_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const s = streams[i];
      if (s.cursor >= last || !this.streams.has(s)) continue;
      const texts = framesOf(s.frame);
      const sent = batch.every((e, j) => e.seq <= s.cursor || !texts[j] || s.write(texts[j]));
      if (sent) s.cursor = last;
    }
  }
}

/** The feeds of one api process, by run. */
export class RunFeeds extends SharedFeeds<FeedStream> {
  constructor(ds: DataSource, log: Logger, hub: RunUpdatesHub | undefined, timings: FeedTimings) {
    super((runId, onEmpty) => new RunFeed(runId, ds, log, hub, timings, onEmpty));
  }
}

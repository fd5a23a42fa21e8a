// The frame of the api's live feeds (run-feeds.ts: a run's events; run-changes.ts: an organization's run
// changes): one reader per key per api process, shared by the streams of that key. The hub's notifications
// and a periodic re-check wake it; wake-ups during a read coalesce into one more read; every stream gets
// keep-alives; the feed goes with its last stream. What a read is and how it is delivered is the feed's own.
import type { RunListener } from '../../persistence/run-updates-hub';

export interface FeedTimings {
  keepAliveMs: number;
  recheckMs: number;
}

/** What the frame needs of a stream. */
export interface SharedStream {
  /** Writes `text`; false when the client is too slow and the stream was ended. */
  write(text: string): boolean;
  /** Ends the stream without a last frame (the process shutting down): its client resumes. */
  end(): void;
}

/** Subscribes a feed to its notifications (RunUpdatesHub); returns the unsubscription. */
export type Subscribe = (listener: RunListener) => () => void;

export abstract class SharedFeed<S extends SharedStream> {
  protected readonly streams = new Set<S>();
  private pumping = false;
  private again = false;
  private readonly unsubscribe: () => void;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly recheck: NodeJS.Timeout;

  constructor(
    subscribe: Subscribe | undefined,
    timings: FeedTimings,
    private readonly onEmpty: () => void,
  ) {
    this.unsubscribe =
      subscribe?.({ update: () => void this.pump(), close: () => this.each((s) => s.end()) }) ?? (() => undefined);
    this.keepAlive = setInterval(() => this.each((s) => s.write(': keep-alive\n\n')), timings.keepAliveMs);
    this.recheck = setInterval(() => void this.pump(), timings.recheckMs);
  }

  add(stream: S): void {
    this.streams.add(stream);
    void this.pump();
  }

  remove(stream: S): void {
    this.streams.delete(stream);
    if (this.streams.size) return;
    clearInterval(this.keepAlive);
    clearInterval(this.recheck);
    this.unsubscribe();
    this.onEmpty();
  }

  protected each(fn: (s: S) => void): void {
    for (const s of [...this.streams]) fn(s);
  }

  /**
   * One read for `readers` (the streams attached when it began: one attached meanwhile has its own turn, since
   * add() asks for another) and its delivery; `more` when it stopped at a full batch.
   */
  protected abstract read(readers: S[]): Promise<'more' | void>;

  /** A read failed; the next wake-up (a notification or the re-check) retries it. */
  protected abstract readFailed(err: unknown): void;

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        if (!this.streams.size) return;
        if ((await this.read([...this.streams])) === 'more') this.again = true;
      } while (this.again && this.streams.size);
    } catch (err) {
      this.readFailed(err);
    } finally {
      this.pumping = false;
    }
  }
}

/** The feeds of one api process, by key (a run, an organization). */
export class SharedFeeds<S extends SharedStream> {
  private readonly feeds = new Map<string, SharedFeed<S>>();

  constructor(private readonly make: (key: string, onEmpty: () => void) => SharedFeed<S>) {}

  /** Adds `stream` to the feed of `key`; returns its removal. */
  attach(key: string, stream: S): () => void {
    let feed = this.feeds.get(key);
    if (!feed) {
      const made = this.make(key, () => {
        if (this.feeds.get(key) === made) this.feeds.delete(key);
      });
      this.feeds.set(key, (feed = made));
    }
    const attached = feed;
    attached.add(stream);
    return () => attached.remove(stream);
  }

  /** Keys with open streams in this process (for tests and diagnostics). */
  get size(): number {
    return this.feeds.size;
  }
}

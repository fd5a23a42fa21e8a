// Streamed events (model tokens) written in order with as few transactions as the database's pace allows:
// while one batch is being written, new events queue for the next. Each batch commits with its NOTIFY, so
// SSE readers see tokens within one write's latency without one transaction per token.
import type { DataSource } from 'typeorm';
import { appendEvents, NewEvent } from './state';

export class RunEventWriter {
  private queue: NewEvent[] = [];
  private writing: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly ds: DataSource,
    private readonly runId: string,
  ) {}

  /** Queues an event; throws the error of an earlier failed write (the stream should stop then). */
  push(event: NewEvent): void {
    if (this.failure) throw this.failure;
    this.queue.push(event);
    this.writing ??= this.writeAll();
  }

  /** Waits until every queued event is committed. */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.failure) throw this.failure;
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.queue.length && !this.failure) {
        const batch = this.queue.splice(0);
        await this.ds.transaction((em) => appendEvents(em, this.runId, batch));
      }
    } catch (err) {
      this.failure = err;
    } finally {
      this.writing = undefined;
    }
  }
}

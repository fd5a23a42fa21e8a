// stdout/stderr of a user process → run log lines, written in small ordered batches, capped in total size.
import { StringDecoder } from 'node:string_decoder';

export type StreamName = 'stdout' | 'stderr';
export interface OutputLine {
  stream: StreamName;
  line: string;
}

/** Longer lines are split: one row stays small, and a process printing without newlines is still bounded. */
export const MAX_LINE_CHARS = 16_384;

/** Splits one stream's bytes into lines (UTF-8 safe across chunk boundaries). */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    const parts = (this.partial + this.decoder.write(chunk)).split('\n');
    this.partial = parts.pop() ?? '';
    for (const p of parts) this.emitLine(p.endsWith('\r') ? p.slice(0, -1) : p);
    while (this.partial.length > MAX_LINE_CHARS) {
      this.emit(this.partial.slice(0, MAX_LINE_CHARS));
      this.partial = this.partial.slice(MAX_LINE_CHARS);
    }
  }

  end(): void {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (rest !== '') this.emitLine(rest);
  }

  private emitLine(line: string) {
    for (let i = 0; i < line.length || i === 0; i += MAX_LINE_CHARS) this.emit(line.slice(i, i + MAX_LINE_CHARS));
  }
}

export interface LogPumpOptions {
  /** Writes one batch; batches are written one at a time, in order. */
  write: (lines: OutputLine[]) => Promise<void>;
  limitBytes: number;
  /** Called once when the limit is crossed (the caller stops the process). */
  onLimit: () => void;
  batchLines?: number;
  batchMs?: number;
  onWriteError?: (err: unknown) => void;
}

/**
 * Buffers lines and writes them every `batchMs` or every `batchLines`, whichever comes first. Lines past
 * `limitBytes` (UTF-8 bytes plus one per newline) are dropped after a final marker line.
 */
export class LogPump {
  private buffer: OutputLine[] = [];
  private timer: NodeJS.Timeout | undefined;
  private tail: Promise<void> = Promise.resolve();
  private bytes = 0;
  limitExceeded = false;

  constructor(private readonly opts: LogPumpOptions) {}

  add(stream: StreamName, line: string): void {
    if (this.limitExceeded) return;
    // PostgreSQL text cannot hold NUL.
    const clean = line.includes('\u0000') ? line.replace(/\u0000/g, '\ufffd') : line;
    this.bytes += Buffer.byteLength(clean) + 1;
    if (this.bytes > this.opts.limitBytes) {
      this.limitExceeded = true;
      this.buffer.push({
        stream: 'stderr',
        line: `[log limit of ${this.opts.limitBytes} bytes exceeded: output truncated, run stopped]`,
      });
      void this.flush(); // never rejects: writeWithRetry reports a lost batch through onWriteError
      this.opts.onLimit();
      return;
    }
    this.buffer.push({ stream, line: clean });
    if (this.buffer.length >= (this.opts.batchLines ?? 100)) void this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.opts.batchMs ?? 100);
  }

  /** Writes what is buffered; resolves when every batch so far is written. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length) this.tail = this.tail.then(() => this.writeWithRetry(batch));
    return this.tail;
  }

  /** A database hiccup must not lose lines or stop the run: a few retries with backoff, then give up on the batch. */
  private async writeWithRetry(batch: OutputLine[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.opts.write(batch);
      } catch (err) {
        if (attempt >= 5) return this.opts.onWriteError?.(err);
        await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
      }
    }
  }
}

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
  /** Writes one batch (atomically); batches are written one at a time, in order. */
  write: (lines: OutputLine[]) => Promise<void>;
  limitBytes: number;
  /** Called once when the limit is crossed (the caller stops the process). */
  onLimit: () => void;
  /** Unsent lines kept while the database does not take them: past either bound, new lines are lost (counted). */
  bufferLines: number;
  bufferBytes: number;
  batchLines?: number;
  batchMs?: number;
  /** Called with the first failed write of each outage (the pump keeps retrying; the caller logs it). */
  onWriteError?: (err: unknown) => void;
}

/** What the pump could not store, and why (recorded on the run: docs/code-runs.md#lost-output). */
export interface LostOutput {
  log_lines: number;
  reason: string;
}

/** A write holds at most this many bytes (the lines a long outage left in the buffer go in several). */
const MAX_WRITE_BYTES = 1024 * 1024;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

const sizeOf = (line: OutputLine) => Buffer.byteLength(line.line) + 1;

/**
 * Buffers lines and writes them every `batchMs` or every `batchLines`, whichever comes first; lines that
 * arrive during a write go in the next one. A failed write is retried (backoff up to 5 s) for as long as the
 * process runs and, once `finish` is called, for its grace period; the lines stay in a bounded buffer
 * meanwhile. Nothing is dropped silently: what the buffer could not hold, and what is left when the grace
 * period ends, is counted in `lost()`. Lines past `limitBytes` (UTF-8 bytes plus one per newline) are
 * dropped after a final marker line (that is the log limit, not a loss).
 */
export class LogPump {
  /** Unsent lines, oldest first; a write takes from the front and removes them once written. */
  private pending: OutputLine[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  /** Ends the current retry wait early (`finish` was called). */
  private wake: (() => void) | undefined;
  private giveUpAt: number | undefined;
  private bytes = 0;
  private lostLines = 0;
  private lastError: unknown;
  private reported = false;
  limitExceeded = false;

  constructor(private readonly opts: LogPumpOptions) {}

  add(stream: StreamName, line: string): void {
    if (this.limitExceeded) return;
    // PostgreSQL text cannot hold NUL.
    const clean = line.includes('\u0000') ? line.replace(/\u0000/g, '\ufffd') : line;
    this.bytes += Buffer.byteLength(clean) + 1;
    if (this.bytes > this.opts.limitBytes) {
      this.limitExceeded = true;
      // The marker is kept even when the buffer is full: it says why the output ends.
      this.enqueue(
        {
          stream: 'stderr',
          line: `[log limit of ${this.opts.limitBytes} bytes exceeded: output truncated, run stopped]`,
        },
        true,
      );
      this.startWriting();
      this.opts.onLimit();
      return;
    }
    this.enqueue({ stream, line: clean });
    if (this.pending.length >= (this.opts.batchLines ?? 100)) this.startWriting();
    else this.timer ??= setTimeout(() => this.startWriting(), this.opts.batchMs ?? 100);
  }

  /** Writes what is buffered; resolves when it is written (or given up, after `finish`). */
  async flush(): Promise<void> {
    this.startWriting();
    while (this.writing) await this.writing;
  }

  /**
   * The process has ended: keeps retrying for at most `graceMs` more, then gives up what is still unsent.
   * Resolves with what was lost, if anything.
   */
  async finish(graceMs: number): Promise<LostOutput | undefined> {
    this.giveUpAt = Date.now() + graceMs;
    this.wake?.();
    await this.flush();
    return this.lost();
  }

  /** What could not be stored so far, or undefined when nothing was lost. */
  lost(): LostOutput | undefined {
    if (!this.lostLines) return undefined;
    const cause =
      this.lastError === undefined ? 'unknown' : String((this.lastError as Error).message ?? this.lastError);
    return {
      log_lines: this.lostLines,
      reason: `The database did not take the run's log lines (${cause}); ${this.lostLines} were lost`,
    };
  }

  private enqueue(line: OutputLine, always = false): void {
    const size = sizeOf(line);
    const full = this.pending.length >= this.opts.bufferLines || this.pendingBytes + size > this.opts.bufferBytes;
    if (full && !always) {
      this.lostLines++;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += size;
  }

  private startWriting(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.writing && this.pending.length) this.writing = this.writeAll().finally(() => (this.writing = undefined));
  }

  private async writeAll(): Promise<void> {
    let delay = RETRY_MIN_MS;
    while (this.pending.length) {
      const batch = this.nextBatch();
      try {
        await this.opts.write(batch);
      } catch (err) {
        this.lastError = err;
        if (!this.reported) {
          this.reported = true;
          this.opts.onWriteError?.(err);
        }
        if (this.giveUpAt !== undefined && Date.now() >= this.giveUpAt) {
          this.lostLines += this.pending.length;
          this.pending = [];
          this.pendingBytes = 0;
          return;
        }
        const wait = this.giveUpAt === undefined ? delay : Math.min(delay, this.giveUpAt - Date.now());
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.max(0, wait));
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wake = undefined;
        delay = Math.min(delay * 2, RETRY_MAX_MS);
        continue;
      }
      delay = RETRY_MIN_MS;
      this.reported = false; // the next outage is reported again
      this.pending.splice(0, batch.length);
      this.pendingBytes -= batch.reduce((sum, line) => sum + sizeOf(line), 0);
    }
  }

  /** The oldest unsent lines, at most MAX_WRITE_BYTES of them (at least one). */
  private nextBatch(): OutputLine[] {
    let bytes = 0;
    let n = 0;
    while (n < this.pending.length && (n === 0 || bytes + sizeOf(this.pending[n]) <= MAX_WRITE_BYTES))
      bytes += sizeOf(this.pending[n++]);
    return this.pending.slice(0, n);
  }
}

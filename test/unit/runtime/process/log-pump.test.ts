// The log pump's bounded buffer and its loss record (src/runtime/process/log-pump.ts): a sink that fails for a
// while loses nothing; one that fails past the grace period, or a buffer that overflows, is counted exactly.
import { expect } from 'chai';
import { LogPump, OutputLine } from '../../../../src/runtime/process/log-pump';

/** A sink that refuses writes (like PostgreSQL with a full disk) while `failing` holds. */
function sink() {
  const stored: string[] = [];
  let failures = 0;
  const state = {
    failing: true,
    stored,
    get failures() {
      return failures;
    },
    write: async (lines: OutputLine[]) => {
      await new Promise((r) => setImmediate(r));
      if (state.failing) {
        failures++;
        throw Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' });
      }
      stored.push(...lines.map((l) => l.line));
    },
  };
  return state;
}

const pumpFor = (write: (lines: OutputLine[]) => Promise<void>, buffer = { lines: 1000, bytes: 1024 * 1024 }) => {
  const errors: unknown[] = [];
  const pump = new LogPump({
    write,
    limitBytes: 10 * 1024 * 1024,
    onLimit: () => undefined,
    bufferLines: buffer.lines,
    bufferBytes: buffer.bytes,
    batchLines: 10,
    batchMs: 5,
    onWriteError: (err) => errors.push(err),
  });
  return { pump, errors };
};

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i}`);

describe('log pump', function () {
  this.timeout(30_000);

  it('keeps lines while the sink fails and writes them all, in order, once it recovers', async () => {
    const s = sink();
    const { pump, errors } = pumpFor(s.write);
    for (const l of lines(250)) pump.add('stdout', l);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(s.stored).to.deep.equal([]);
    expect(s.failures).to.be.greaterThan(2); // retried, not given up
    for (const l of lines(50, 'late')) pump.add('stderr', l);
    s.failing = false;
    // The process ended while the sink was failing: the grace period is long enough for it to recover.
    const lost = await pump.finish(10_000);
    expect(lost).to.equal(undefined);
    expect(s.stored).to.deep.equal([...lines(250), ...lines(50, 'late')]);
    expect(errors).to.have.length(1); // reported once, not per retry
  });

  it('gives up what is unsent when the grace period ends, and counts it exactly', async () => {
    const s = sink();
    s.failing = false;
    const { pump } = pumpFor(s.write);
    for (const l of lines(30, 'stored')) pump.add('stdout', l);
    await pump.flush();
    s.failing = true;
    for (const l of lines(123)) pump.add('stdout', l);
    const started = Date.now();
    const lost = await pump.finish(800);
    expect(Date.now() - started).to.be.within(700, 3_000);
    expect(s.stored).to.deep.equal(lines(30, 'stored'));
    expect(lost).to.deep.equal({
      log_lines: 123,
      reason:
        "The database did not take the run's log lines (could not extend file: No space left on device); 123 were lost",
    });
  });

  it('counts the lines its buffer could not hold (by lines and by bytes), keeps the rest in order', async () => {
    const s = sink();
    const byLines = pumpFor(s.write, { lines: 100, bytes: 1024 * 1024 });
    for (const l of lines(160)) byLines.pump.add('stdout', l);
    s.failing = false;
    expect(await byLines.pump.finish(5_000)).to.deep.include({ log_lines: 60 });
    expect(s.stored).to.deep.equal(lines(100));

    const t = sink();
    // 1,000 bytes per line with its newline: 64 KiB holds 65 of them.
    const byBytes = pumpFor(t.write, { lines: 100_000, bytes: 64 * 1024 });
    const big = (i: number) => `${String(i).padStart(3, '0')}${'x'.repeat(996)}`;
    for (let i = 0; i < 100; i++) byBytes.pump.add('stdout', big(i));
    t.failing = false;
    expect(await byBytes.pump.finish(5_000)).to.deep.include({ log_lines: 35 });
    expect(t.stored).to.deep.equal(Array.from({ length: 65 }, (_, i) => big(i)));
  });

  it('writes without delay when the sink takes every batch (no loss, no error)', async () => {
    const s = sink();
    s.failing = false;
    const { pump, errors } = pumpFor(s.write);
    for (const l of lines(1000)) pump.add('stdout', l);
    expect(await pump.finish(0)).to.equal(undefined);
    expect(s.stored).to.deep.equal(lines(1000));
    expect(errors).to.deep.equal([]);
  });
});

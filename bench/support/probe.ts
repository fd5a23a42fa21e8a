// Preloaded (`node --require`) into the api and worker processes of the production shape: it measures the
// process from inside without any change to its code. Every 500 ms it writes its RSS (peak since the last
// reset) and its event-loop delay (p99 and max since the last reset) to BENCH_PROBE_FILE; writing
// BENCH_PROBE_FILE.reset (a new mtime) resets both, so a benchmark can measure one phase. (Not a signal: the Temporal
// worker shuts down on SIGUSR2, and SIGUSR1 starts the inspector.) It removes its settings from the environment at once, so that
// the programs the worker spawns neither inherit nor load it.
import fs from 'node:fs';
import { Session } from 'node:inspector';
import {
  constants as perfConstants,
  monitorEventLoopDelay,
  PerformanceObserver,
  type PerformanceEntry,
} from 'node:perf_hooks';

export interface ProbeSample {
  pid: number;
  /** Peak RSS since the last reset, bytes. */
  peakRss: number;
  /** Event-loop delay since the last reset, ms. */
  delayP99: number;
  delayMax: number;
  /** The longest garbage-collection pause since the last reset, ms (what part of the delay GC explains). */
  gcMax: number;
  /** Garbage-collection pauses since the last reset by kind (V8's: minor = scavenge, major = mark-compact, ...). */
  gc: Record<GcKind, GcPauses>;
  at: number;
  /** The last reset it saw (the mtime of BENCH_PROBE_FILE.reset, as text). */
  reset: string;
  /** SQL statements sent (pg `Client.query` calls) and gRPC unary calls made (Temporal) since the last reset. */
  queries: number;
  grpcCalls: number;
}

export type GcKind = 'minor' | 'major' | 'incremental' | 'weakcb';
export interface GcPauses {
  count: number;
  totalMs: number;
  maxMs: number;
}
const GC_KINDS: Record<number, GcKind> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const noPauses = (): Record<GcKind, GcPauses> => ({
  minor: { count: 0, totalMs: 0, maxMs: 0 },
  major: { count: 0, totalMs: 0, maxMs: 0 },
  incremental: { count: 0, totalMs: 0, maxMs: 0 },
  weakcb: { count: 0, totalMs: 0, maxMs: 0 },
});

const file = process.env.BENCH_PROBE_FILE;
const profileFile = process.env.BENCH_PROFILE_FILE;
delete process.env.BENCH_PROBE_FILE;
delete process.env.BENCH_PROFILE_FILE;
delete process.env.NODE_OPTIONS;

// A CPU profile of the whole life of the process (`--cpu-prof` is not allowed in NODE_OPTIONS), written to
// BENCH_PROFILE_FILE once BENCH_PROBE_FILE.stop exists (the bench creates it before stopping us). Its worker
// threads too (the Temporal SDK's workflow thread, the webscraper's readers), each beside it as
// `<name>.thread-<id>.cpuprofile`, through the inspector's NodeWorker domain; those are written first.
let profiler: Session | undefined;
/** The inspector sessions of this process's worker threads, by sessionId, with the thread's id. */
const threads = new Map<string, number>();
if (file && profileFile) {
  profiler = new Session();
  profiler.connect();
  profiler.post('Profiler.enable', () => profiler!.post('Profiler.start'));
  profiler.on('NodeWorker.attachedToWorker', ({ params }: any) => {
    threads.set(params.sessionId, params.workerInfo.workerId);
    for (const [id, method] of [
      [1, 'Profiler.enable'],
      [2, 'Profiler.start'],
    ] as const)
      profiler?.post('NodeWorker.sendMessageToWorker', {
        sessionId: params.sessionId,
        message: JSON.stringify({ id, method }),
      } as object);
  });
  profiler.post('NodeWorker.enable', { waitForDebuggerOnStart: false } as object);
  // And where it allocates: a sampling heap profile that keeps the samples of objects collected since (every
  // allocation, not only what is alive at the end), written beside it as .heapprofile.
  profiler.post('HeapProfiler.enable', () =>
    profiler!.post('HeapProfiler.startSampling', {
      samplingInterval: 64 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as object),
  );
}
/** Stops the profiles of the worker threads still alive and writes them (at most 5 s). */
function stopThreadProfiles(session: Session): Promise<void> {
  const STOP_ID = 3;
  let pending = threads.size;
  return new Promise((resolve) => {
    if (!pending) return resolve();
    const timer = setTimeout(resolve, 5_000);
    session.on('NodeWorker.receivedMessageFromWorker', ({ params }: any) => {
      const message = JSON.parse(params.message);
      if (message.id !== STOP_ID) return;
      if (message.result?.profile)
        fs.writeFileSync(
          profileFile!.replace(/\.cpuprofile$/, `.thread-${threads.get(params.sessionId)}.cpuprofile`),
          JSON.stringify(message.result.profile),
        );
      if (--pending === 0) {
        clearTimeout(timer);
        resolve();
      }
    });
    for (const sessionId of threads.keys())
      session.post('NodeWorker.sendMessageToWorker', {
        sessionId,
        message: JSON.stringify({ id: STOP_ID, method: 'Profiler.stop' }),
      } as object);
  });
}
function stopProfile(): void {
  const session = profiler;
  if (!session || !file || !fs.existsSync(`${file}.stop`)) return;
  profiler = undefined;
  void stopThreadProfiles(session).then(() =>
    session.post('HeapProfiler.stopSampling', (heapErr, heap) => {
      if (!heapErr)
        fs.writeFileSync(profileFile!.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(heap.profile));
      session.post('Profiler.stop', (err, result) => {
        if (!err) fs.writeFileSync(profileFile!, JSON.stringify(result.profile));
        session.disconnect();
      });
    }),
  );
}
// Statements and gRPC calls, counted where every one passes (pg's Client.query, grpc-js's unary call): the
// round trips per unit of work (a create). Loaded from the process's own node_modules, so these are its modules.
const counts = { queries: 0, grpcCalls: 0 };
function countCalls(moduleName: string, proto: (m: any) => any, method: string, counter: keyof typeof counts) {
  try {
    const target = proto(require(moduleName));
    const original = target[method];
    target[method] = function (this: unknown, ...args: unknown[]) {
      counts[counter]++;
      return original.apply(this, args);
    };
  } catch {
    // the process does not use that module
  }
}
if (file) {
  countCalls('pg', (m) => m.Client.prototype, 'query', 'queries');
  countCalls('@grpc/grpc-js', (m) => m.Client.prototype, 'makeUnaryRequest', 'grpcCalls');
}

// The sample is written in place (one pwrite of a fixed-size, space-padded buffer into a file kept open),
// and a reset is seen by one stat: the probe's own cost must stay far below what it measures (a first
// version, writing a new file and renaming it every 250 ms, cost the api ~10 % of its CPU on a loaded host).
const SAMPLE_BYTES = 1024;
const RESOLUTION_MS = 10;
if (file) {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  const fd = fs.openSync(file, 'w');
  let peakRss = process.memoryUsage.rss();
  let resetSeen = '';
  let gcMax = 0;
  let gc = noPauses();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMax = Math.max(gcMax, entry.duration);
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      const pauses = gc[GC_KINDS[kind] ?? 'minor'];
      pauses.count++;
      pauses.totalMs += entry.duration;
      pauses.maxMs = Math.max(pauses.maxMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  const write = () => {
    stopProfile();
    const reset = String(fs.statSync(`${file}.reset`, { throwIfNoEntry: false })?.mtimeMs ?? '');
    if (reset !== resetSeen) {
      resetSeen = reset;
      delay.reset();
      peakRss = 0;
      gcMax = 0;
      gc = noPauses();
      counts.queries = 0;
      counts.grpcCalls = 0;
    }
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const sample: ProbeSample = {
      pid: process.pid,
      peakRss,
      // The histogram records the time between the timer's callbacks, the 10 ms of the resolution included:
      // the delay is what exceeds it (as fastify's under-pressure reads it).
      delayP99: Math.max(0, delay.percentile(99) / 1e6 - RESOLUTION_MS),
      delayMax: Math.max(0, delay.max / 1e6 - RESOLUTION_MS),
      gcMax,
      gc,
      at: Date.now(),
      reset: resetSeen,
      ...counts,
    };
    try {
      fs.writeSync(fd, JSON.stringify(sample).padEnd(SAMPLE_BYTES), 0, 'utf8');
    } catch {
      // the bench's directory is gone: it has stopped
    }
  };
  setInterval(write, 500).unref();
}

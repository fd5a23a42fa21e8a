// The drills, by name, each with its full size (`npm run drill`) and, for the ones that take seconds, a quick
// size for `npm test`. The Temporal restart (each stop waits out the api's 5 s start deadline, each start of
// the dev server takes seconds), the 10 s PostgreSQL outage and the crash faults run in `npm run drill` only.
import { admissionDrill } from './admission';
import { apiKillDrill } from './api-kill';
import { badInputDrill } from './bad-input';
import { clusterDrill } from './cluster';
import { crashFaultsDrill } from './crash-faults';
import type { DrillReport } from './kit';
import { hostileMachineDrill } from './hostile-machine';
import { hostileTenantDrill } from './hostile-tenant';
import { overloadDrill } from './overload';
import { pgOutageDrill } from './pg-outage';
import { scaleOutDrill } from './scale-out';
import { temporalRestartDrill } from './temporal-restart';
import { waitpointsDrill } from './waitpoints';
import { upgradeDrill } from './upgrade';
import { workerKillDrill } from './worker-kill';

/** The ordinary system user the rootless drill runs the platform as (made by the drill: useradd --system). */
const ROOTLESS_USER = 'tarmac-rootless';

export interface Drill {
  name: string;
  /** What it does, for `npm run drill -- --list` and the README. */
  summary: string;
  full: () => Promise<DrillReport>;
  /** The size `npm test` runs; absent: `npm run drill` only. */
  quick?: () => Promise<DrillReport>;
  /** It starts what it needs itself (the cluster drill: the production shape), not on the test stack. */
  standalone?: boolean;
}

export const DRILLS: Drill[] = [
  {
    name: 'overload',
    summary:
      'Three organizations submit work of every kind at several times the worker slots while a fourth runs one structure at a time: nothing ends for a platform reason, the share holds, the rest waits in PostgreSQL',
    full: () => overloadDrill({ perOrganization: 28, samples: 7, judgeLatency: true }),
    quick: () => overloadDrill({ perOrganization: 14, samples: 3, judgeLatency: false }),
  },
  {
    name: 'worker-kill',
    summary:
      'SIGKILL the worker with 50 runs in flight, start another: every run terminal, as its workflow says, none run twice',
    full: () => workerKillDrill({ inFlight: 50, before: 5, during: 10 }),
    quick: () => workerKillDrill({ inFlight: 10, before: 2, during: 3 }),
  },
  {
    name: 'api-kill',
    summary:
      'SIGKILL an api process serving 100 SSE streams; clients resume with Last-Event-ID on another: no event missing or repeated',
    full: () => apiKillDrill({ streams: 100, runs: 10, events: 40, seconds: 4 }),
    quick: () => apiKillDrill({ streams: 100, runs: 5, events: 20, seconds: 2 }),
  },
  {
    name: 'temporal-restart',
    summary:
      'Stop the Temporal dev server (SIGTERM, then SIGKILL) during runs and start it on the same SQLite file: runs finish',
    full: () => temporalRestartDrill({ runs: 20, seconds: 45, downMs: 12_000, signals: ['SIGTERM', 'SIGKILL'] }),
  },
  {
    name: 'waitpoints',
    summary:
      'Assistant runs wait for approval through a worker SIGKILL and a Temporal restart, holding no slot; once approved, each makes its call exactly once',
    full: () => waitpointsDrill({ runs: 50 }),
    quick: () => waitpointsDrill({ runs: 10 }),
  },
  {
    name: 'pg-outage',
    summary:
      'Stop PostgreSQL for 10 s under load: 503 meanwhile, recovery by itself, every status, event and log line kept',
    full: () => pgOutageDrill({ runs: 20, outageMs: 10_000, lines: 40, events: 20, seconds: 14 }),
  },
  {
    name: 'crash-faults',
    summary:
      'npm start on a 384 MiB tmpfs, 10 runs in flight each time: SIGKILL of PostgreSQL, of Temporal (the supervisor restarts them), of every process at once (a power cut), a full disk: no run lost, doubled or stuck, every line and event stored or its loss recorded, every stream to its end comment',
    full: () => crashFaultsDrill({ runs: 10, lines: 30, events: 10, seconds: 12, diskMb: 384, fullMs: 20_000 }),
  },
  {
    name: 'hostile-tenant',
    summary:
      "A tenant's structure tries every way out of its sandbox (files, processes, ports, kernel, resources) beside another tenant's runs: 0 escapes",
    full: () => hostileTenantDrill({ victims: 5 }),
    quick: () => hostileTenantDrill({ victims: 2 }),
  },
  {
    name: 'hostile-tenant-rootless',
    summary:
      'The same attacks on an api and worker started as an ordinary system user without capabilities (the rootless mode): 0 escapes but its known limits',
    full: () => hostileTenantDrill({ victims: 5, rootless: { user: ROOTLESS_USER } }),
    quick: () => hostileTenantDrill({ victims: 2, rootless: { user: ROOTLESS_USER } }),
  },
  {
    name: 'hostile-tenant-nonroot',
    summary:
      'The same attacks on a worker started as a non-root user with the capabilities of docs/security.md: 0 escapes',
    full: () => hostileTenantDrill({ victims: 5, asUser: 'tarmac-worker' }),
  },
  {
    name: 'hostile-machine',
    summary:
      'A tenant tries to take the machine (memory, CPU, processes, disk, slots, file handles, the host network): every limit holds, others unharmed',
    full: () => hostileMachineDrill({ quick: false }),
    quick: () => hostileMachineDrill({ quick: true, except: ['cpu-storm', 'slot-hog', 'common-word-queries'] }),
  },
  {
    name: 'scale-out',
    summary:
      '2 apis + 2 workers on one PostgreSQL, Temporal and S3: 500 runs while a worker is SIGKILLed, SSE on api A of events posted through B while A is SIGKILLed, assets across apis, throughput 1+1 vs 2+2',
    full: () => scaleOutDrill({ runs: 500, throughputRuns: 100, streams: 50, streamRuns: 10, events: 30 }),
  },
  {
    name: 'admission',
    summary:
      'Run control under load and faults: repeated idempotency keys through two apis, concurrency limits and retries across a worker SIGKILL, schedules, rate limits: every promise of docs/run-control.md held',
    full: () => admissionDrill({ quick: false }),
    quick: () => admissionDrill({ quick: true }),
  },
  {
    name: 'bad-input',
    summary:
      'Every route fed malformed, wrong-typed, oversize, unknown, foreign and traversal input, and unsafe archives: 4xx only, nothing written',
    full: () => badInputDrill(),
    quick: () => badInputDrill(),
  },
  {
    name: 'upgrade',
    summary:
      'A rolling upgrade with work of every kind in flight: build B (its workflow code changed, not replay-compatible) migrates (expand) while A serves, polls, is promoted; A drains and stops: 0 nondeterminism errors, every item ends, each workflow on the build that started it',
    full: () => upgradeDrill({ perKind: 2, seconds: 20, workers: 2 }),
    quick: () => upgradeDrill({ perKind: 1, seconds: 15, workers: 1 }),
  },
  {
    name: 'cluster',
    summary:
      'The production shape on one machine (2 Temporal nodes, HAProxy, 2 apis, 2 workers) under load through its load balancer: SIGKILL of a Temporal node, an api, a worker, each restarted, a worker cut from PostgreSQL for 30 s, and a PostgreSQL restart: no run lost, doubled or stuck, streams resume, every workflow in visibility',
    full: () =>
      clusterDrill({
        everyMs: 700,
        runSeconds: 8,
        lines: 8,
        events: 4,
        measureMs: 20_000,
        downMs: 10_000,
        streams: 6,
        settleMs: 120_000,
      }),
    // The same faults (the cut lasts its 30 s), a lighter load and shorter downs.
    quick: () =>
      clusterDrill({
        everyMs: 1000,
        runSeconds: 4,
        lines: 4,
        events: 2,
        measureMs: 5_000,
        downMs: 5_000,
        streams: 3,
        settleMs: 120_000,
      }),
    standalone: true,
  },
];

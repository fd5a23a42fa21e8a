// Drill: overload. Three organizations submit work of every kind at once, several times the worker's activity
// slots (structure runs, function executes, assistant runs, chat messages, knowledge base jobs, data jobs and
// builds), to an api and a worker of the drill's own (WORKER_ACTIVITY_SLOTS=8, ORG_MAX_CONCURRENT_RUNS=2),
// while a fourth, quiet organization runs one structure at a time. It holds when nothing ends for a platform
// reason (SandboxSetupFailed, WorkerLost, StartFailed, a 5xx), everything ends as its program or model says
// and nothing stays open, no busy organization ever executes more than its share (the rest waits in
// PostgreSQL: execution_slots WAITING, holding no worker slot), and, at full size, the quiet organization's
// p50 stays within 2× its idle p50 (plus a second of slack for the loaded machine).
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { DrillReport, Findings, sleep } from './kit';
import { Processes, startApiProcess, startWorkerProcess } from './processes';
import { KINDS_OF_WORK, workOfEveryKind } from './work-of-every-kind';

const SLOTS = 8;
const SHARE = 2;
/** Reasons that are the platform's, never the work's. */
const PLATFORM_REASONS = [
  'SandboxSetupFailed',
  'SandboxUnavailable',
  'WorkerLost',
  'StartFailed',
  'InfrastructureError',
];

export interface OverloadOptions {
  /** Items of work each busy organization submits at once (of every kind together). */
  perOrganization: number;
  /** Timed runs of the quiet organization, idle and during the overload. */
  samples: number;
  /** Judge the quiet organization's p50 (a latency ratio: noisy on a loaded 2-core machine, so full size only). */
  judgeLatency: boolean;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One busy organization's items of work (`n`, of every kind in turn), each answering how it ended. */
async function busyOrganization(label: string, baseUrl: string, n: number) {
  const { organizationId, kinds } = await workOfEveryKind(`overload-${label}`, () => baseUrl);
  return { organizationId, items: Array.from({ length: n }, (_, i) => kinds[i % kinds.length]) };
}

export async function overloadDrill(opts: OverloadOptions): Promise<DrillReport> {
  const findings = new Findings('overload', `3 organizations × ${opts.perOrganization} items of every kind at once`);
  const procs = new Processes();
  const queue = `drill-overload-${process.pid}-${Date.now()}`;
  const { ds, modelProvider } = getStack();
  // The model double, as the stack's own processes have it (assistant runs and chat messages).
  const models = { MODEL_PROVIDERS: `local=${modelProvider.baseUrl}` };
  try {
    const api = await startApiProcess(procs, 'overload-api', { TEMPORAL_TASK_QUEUE: queue, ...models });
    await startWorkerProcess(procs, 'overload-worker', {
      ...models,
      TEMPORAL_TASK_QUEUE: queue,
      RUN_API_BASE_URL: api.baseUrl,
      WORKER_ACTIVITY_SLOTS: String(SLOTS),
      ORG_MAX_CONCURRENT_RUNS: String(SHARE),
    });
    const quiet = await newTenant('overload-quiet');
    const oneLiner = await structureWithBuild(quiet.organizationId, { files: { 'structure.py': 'print("hello")\n' } });
    const timedRun = async () => {
      const started = Date.now();
      const created = await as(quiet.key, api.baseUrl).post(`/api/structures/${oneLiner.structureId}/runs`, {
        args: [],
      });
      if (created.status !== 201) throw new Error(`the quiet run answered ${created.status} ${created.text}`);
      const ended = await waitForRun(quiet.key, created.body.structure_run_id, undefined, 600_000, api.baseUrl);
      if (ended.status !== 'SUCCEEDED') findings.violation(`the quiet organization's run ended ${ended.status}`);
      return Date.now() - started;
    };
    const idle: number[] = [];
    for (let i = 0; i < opts.samples; i++) idle.push(await timedRun());

    const busy = await Promise.all(['a', 'b', 'c'].map((l) => busyOrganization(l, api.baseUrl, opts.perOrganization)));
    const busyOrgs = busy.map((b) => b.organizationId);
    findings.faults = 1;
    // The share, sampled while the work is in flight: executing at most SHARE per organization, the rest WAITING.
    let mostHolding = 0;
    let waitingSeen = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows: Array<{ organization_id: string; holding: number; waiting: number }> = await ds.query(
          `SELECT organization_id, count(*) FILTER (WHERE state = 'HOLDING' AND NOT in_parent_slot)::int AS holding,
                  count(*) FILTER (WHERE state = 'WAITING')::int AS waiting
             FROM execution_slots WHERE organization_id = ANY($1::uuid[]) GROUP BY organization_id`,
          [busyOrgs],
        );
        for (const r of rows) {
          mostHolding = Math.max(mostHolding, r.holding);
          waitingSeen = Math.max(waitingSeen, r.waiting);
        }
        await sleep(200);
      }
    })();
    const work = Promise.all(busy.flatMap((b) => b.items).map((item) => item()));
    const during: number[] = [];
    for (let i = 0; i < opts.samples; i++) during.push(await timedRun());
    const endings = await work;
    sampling = false;
    await sampler;

    for (const e of endings) {
      findings.checked++;
      findings.count(`${e.what} ${e.status}`);
      if (e.status !== 'SUCCEEDED' || (e.reason && PLATFORM_REASONS.includes(e.reason)))
        findings.violation(`a ${e.what} ended ${e.status}${e.reason ? ` ${e.reason}` : ''}`);
    }
    if (mostHolding > SHARE) findings.violation(`an organization executed ${mostHolding} at once (share ${SHARE})`);
    if (waitingSeen === 0) findings.violation('no work ever waited for its share: the drill did not overload');
    const open: Array<{ n: number }> = await ds.query(
      `SELECT count(*)::int AS n FROM runs WHERE organization_id = ANY($1::uuid[]) AND status NOT IN ('SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED')`,
      [busyOrgs],
    );
    if (open[0].n) findings.violation(`${open[0].n} runs still open`);
    const [idleP50, busyP50] = [p50(idle), p50(during)];
    findings.facts['quiet p50 idle ms'] = idleP50;
    findings.facts['quiet p50 during ms'] = busyP50;
    findings.facts['most executing per organization'] = mostHolding;
    findings.facts['most waiting per organization'] = waitingSeen;
    findings.notes.push(
      `${endings.length} items of ${KINDS_OF_WORK} kinds from 3 organizations on ${SLOTS} activity slots (share ${SHARE}): ` +
        `at most ${mostHolding} executing per organization, up to ${waitingSeen} waiting in PostgreSQL; ` +
        `the quiet organization's run p50 ${idleP50} ms idle, ${busyP50} ms during (${(busyP50 / idleP50).toFixed(2)}×)`,
    );
    if (opts.judgeLatency && busyP50 > 2 * idleP50 + 1000)
      findings.violation(`the quiet organization's p50 went from ${idleP50} to ${busyP50} ms (more than 2× + 1 s)`);
    return findings.report();
  } finally {
    await procs.stopAll(findings);
  }
}

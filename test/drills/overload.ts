// Drill: overload. Three organizations submit work of every kind at once, several times the worker's activity
// slots (structure runs, function executes, assistant runs, chat messages, knowledge base jobs, data jobs and
// builds), to an api and a worker of the drill's own (WORKER_ACTIVITY_SLOTS=8, ORG_MAX_CONCURRENT_RUNS=2),
// while a fourth, quiet organization runs one structure at a time. It holds when nothing ends for a platform
// reason (SandboxSetupFailed, WorkerLost, StartFailed, a 5xx), everything ends as its program or model says
// and nothing stays open, no busy organization ever executes more than its share (the rest waits in
// PostgreSQL: execution_slots WAITING, holding no worker slot), and, at full size, the quiet organization's
// p50 stays within 2× its idle p50 (plus a second of slack for the loaded machine).
import { randomUUID } from 'node:crypto';
import { structureWithBuild } from '../harness/builds';
import { chatRequest } from '../harness/chat-requests';
import { as } from '../harness/client';
import { uploadText } from '../harness/knowledge-bases';
import { TERMINAL, waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { config, entriesOf, makeArchive, uploadToNewBucket, waitForDeployment } from '../fixtures/projects';
import { DrillReport, Findings, sleep, until } from './kit';
import { Processes, startApiProcess, startWorkerProcess } from './processes';

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

type Api = ReturnType<typeof as>;
interface Ending {
  what: string;
  status: string;
  reason?: string;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The record at `path` once its status is terminal. */
const ended = (api: Api, what: string, path: string) =>
  until(
    what,
    600_000,
    async () => {
      const r = (await api.get(path)).body;
      return TERMINAL.includes(r.status) ? r : undefined;
    },
    250,
  );

/** One busy organization's resources, and its items of work, each answering how it ended. */
async function busyOrganization(
  label: string,
  baseUrl: string,
  n: number,
): Promise<{ organizationId: string; items: Array<() => Promise<Ending>> }> {
  const t = await newTenant(`overload-${label}`);
  const api: Api = as(t.key, baseUrl);
  const { modelProvider } = getStack();
  const model = modelProvider.uniqueModel();
  modelProvider.script({ model, text: 'Busy, but here.', times: Infinity });
  const structure = await structureWithBuild(t.organizationId, {
    files: { 'structure.py': 'import time\ntime.sleep(1)\nprint("done")\n' },
  });
  const fn = await structureWithBuild(t.organizationId, {
    kind: 'function',
    files: { 'main.py': 'def handler(event):\n    return {"ok": True}\n' },
    mainFile: 'main.py',
  });
  const assistant = (await api.post('/api/assistants', { name: 'busy', input: 'Hi' })).body.assistant_id as string;
  const bucketId = (await api.post('/api/buckets', { name: 'docs' })).body.bucket_id as string;
  await uploadText(api, bucketId, 'notes.md', 'Narwhals carry a spiral tusk.');
  const project = makeArchive(
    'zip',
    entriesOf({ 'structure_config.yaml': config('python3', '  main_file: s.py\n'), 's.py': 'print("built")\n' }),
  );
  const codeBucket = await uploadToNewBucket(t.key, 'code.zip', project, baseUrl);

  const answered = (what: string, res: { status: number; text: string }) => {
    if (res.status >= 500) return { what, status: `HTTP ${res.status}`, reason: res.text.slice(0, 200) };
    return undefined;
  };
  const kinds: Array<() => Promise<Ending>> = [
    async () => {
      const res = await api.post(`/api/structures/${structure.structureId}/runs`, { args: [] });
      if (res.status !== 201)
        return answered('structure run', res) ?? { what: 'structure run', status: `HTTP ${res.status}` };
      const run = await waitForRun(t.key, res.body.structure_run_id, undefined, 600_000, baseUrl);
      return { what: 'structure run', status: run.status, reason: run.status_detail?.reason };
    },
    async () => {
      const res = await api.post(`/api/functions/${fn.structureId}/execute`, {});
      return (
        answered('function', res) ?? {
          what: 'function',
          status: res.status === 200 ? 'SUCCEEDED' : `HTTP ${res.status}`,
        }
      );
    },
    async () => {
      const res = await api.post(`/api/assistants/${assistant}/runs`, { input: 'Hi', model: `local/${model}` });
      if (res.status !== 201)
        return answered('assistant run', res) ?? { what: 'assistant run', status: `HTTP ${res.status}` };
      const run = await ended(api, 'an assistant run', `/api/assistant-runs/${res.body.assistant_run_id}`);
      return { what: 'assistant run', status: run.status, reason: run.status_detail?.reason };
    },
    async () => {
      const res = await api.post('/api/chat/messages', chatRequest(model));
      return (
        answered('chat message', res) ?? {
          what: 'chat message',
          status: res.status === 201 ? 'SUCCEEDED' : `HTTP ${res.status}`,
        }
      );
    },
    async () => {
      const kb = await api.post('/api/knowledge-bases', {
        name: `kb-${randomUUID()}`,
        type: 'gtc_hybrid_sql_pg_vector',
        config: { gtc_hybrid_sql_pg_vector: {} },
        asset_paths: [`${bucketId}/notes.md`],
      });
      const job = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
      if (job.status !== 202)
        return answered('knowledge base job', job) ?? { what: 'knowledge base job', status: `HTTP ${job.status}` };
      const j = await ended(api, 'a knowledge base job', `/api/knowledge-base-jobs/${job.body.knowledge_base_job_id}`);
      return { what: 'knowledge base job', status: j.status, reason: j.status_detail?.reason };
    },
    async () => {
      const created = await api.post('/api/data-connectors', {
        name: `copy-${randomUUID()}`,
        type: 'data_lake',
        config: { data_lake: { bucket_id: bucketId, asset_paths: ['notes.md'] } },
      });
      if (created.status !== 201)
        return answered('data job', created) ?? { what: 'data job', status: `HTTP ${created.status}` };
      const j = await ended(api, 'a data job', `/api/data-jobs/${created.body.data_job_id}`);
      return { what: 'data job', status: j.status, reason: j.status_detail?.reason };
    },
    async () => {
      const created = await api.post('/api/structures', {
        name: `built-${randomUUID().slice(0, 8)}`,
        code: { data_lake: { bucket_id: codeBucket, asset_path: 'code.zip' } },
      });
      if (created.status !== 201)
        return answered('build', created) ?? { what: 'build', status: `HTTP ${created.status}` };
      const d = await waitForDeployment(t.key, created.body.latest_deployment_id, 600_000);
      return { what: 'build', status: d.status, reason: d.status_detail?.reason };
    },
  ];
  return { organizationId: t.organizationId, items: Array.from({ length: n }, (_, i) => kinds[i % kinds.length]) };
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
      `${endings.length} items of 7 kinds from 3 organizations on ${SLOTS} activity slots (share ${SHARE}): ` +
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

// Attack: one organization takes every execution slot. It starts a backlog of sleeping runs (more than the
// worker's activity slots in the full drill); another organization's one-line runs are timed before (quiet)
// and during the backlog. The fair share (ORG_MAX_CONCURRENT_RUNS, src/jobs/admission.ts) holds when the
// other organization's p50 stays within 2× its quiet p50 (plus a second of slack for the loaded machine),
// the backlog never executes more than its share at once, and its waiting runs say why they wait.
import { entriesOf, makeArchive, uploadToNewBucket, waitForDeployment, config } from '../../fixtures/projects';
import { as } from '../../harness/client';
import { SLEEP_PROGRAM, TERMINAL, waitForRun } from '../../harness/runs';
import { newTenant } from '../../harness/stack';
import type { MachineAttack, MachineAttackContext } from './kit';

/** A structure deployed through the public api (archive in a bucket, then a build). */
async function deployed(key: string, baseUrl: string, program: string): Promise<string> {
  const zip = makeArchive(
    'zip',
    entriesOf({ 'structure_config.yaml': config('python3', '  main_file: structure.py\n'), 'structure.py': program }),
  );
  const bucketId = await uploadToNewBucket(key, 'code.zip', zip);
  const created = await as(key, baseUrl).post('/api/structures', {
    name: 'slots',
    code: { data_lake: { bucket_id: bucketId, asset_path: 'code.zip' } },
  });
  if (created.status !== 201) throw new Error(`creating a structure answered ${created.status} ${created.text}`);
  const deployment = await waitForDeployment(key, created.body.latest_deployment_id);
  if (deployment.status !== 'SUCCEEDED') throw new Error(`deployment ${deployment.status}`);
  return created.body.structure_id;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timedRun(key: string, baseUrl: string, structureId: string): Promise<number> {
  const started = Date.now();
  const created = await as(key, baseUrl).post(`/api/structures/${structureId}/runs`, { args: [] });
  if (created.status !== 201) throw new Error(`a run answered ${created.status} ${created.text}`);
  const ended = await waitForRun(key, created.body.structure_run_id, undefined, 120_000, baseUrl);
  if (ended.status !== 'SUCCEEDED') throw new Error(`the quiet run ended ${ended.status}`);
  return Date.now() - started;
}

async function fillTheSlots(ctx: MachineAttackContext) {
  const { baseUrl, config: stackConfig } = ctx.stack;
  const limit = stackConfig.execution.orgMaxConcurrentRuns;
  const backlog = ctx.quick ? limit + 5 : stackConfig.execution.workerActivitySlots + 10;
  const sleepSeconds = ctx.quick ? 8 : 20;
  const samples = ctx.quick ? 3 : 7;
  const busy = await newTenant('slots-busy');
  const quiet = await newTenant('slots-quiet');
  const [sleeper, oneLiner] = await Promise.all([
    deployed(busy.key, baseUrl, SLEEP_PROGRAM),
    deployed(quiet.key, baseUrl, 'print("hello")\n'),
  ]);

  const quietMs: number[] = [];
  for (let i = 0; i < samples; i++) quietMs.push(await timedRun(quiet.key, baseUrl, oneLiner));

  const runIds = await Promise.all(
    Array.from({ length: backlog }, async () => {
      const r = await as(busy.key, baseUrl).post(`/api/structures/${sleeper}/runs`, { args: [String(sleepSeconds)] });
      if (r.status !== 201) throw new Error(`a backlog run answered ${r.status} ${r.text}`);
      return r.body.structure_run_id as string;
    }),
  );
  let mostExecuting = 0;
  let sawWaitingDetail = false;
  const look = async () => {
    const runs = await Promise.all(
      runIds.map(async (id) => (await as(busy.key, baseUrl).get(`/api/structure-runs/${id}`)).body),
    );
    mostExecuting = Math.max(mostExecuting, runs.filter((r) => ['STARTING', 'RUNNING'].includes(r.status)).length);
    sawWaitingDetail ||= runs.some(
      (r) => r.status === 'QUEUED' && r.status_detail?.reason === 'WaitingForExecutionSlot',
    );
    return runs;
  };
  // The backlog has taken its share of the slots.
  for (let i = 0; i < 200 && (await look()).filter((r) => r.status === 'RUNNING').length < limit; i++)
    await new Promise((r) => setTimeout(r, 100));

  const attackedMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    attackedMs.push(await timedRun(quiet.key, baseUrl, oneLiner));
    await look();
  }
  await look();

  // Bounded: the backlog is cancelled rather than waited for.
  await Promise.all(runIds.map((id) => as(busy.key, baseUrl).post(`/api/structure-runs/${id}/cancel`)));
  const ends = await Promise.all(runIds.map((id) => waitForRun(busy.key, id, undefined, 60_000, baseUrl)));
  const open = ends.filter((r) => !TERMINAL.includes(r.status)).length;

  const quietP50 = p50(quietMs);
  const attackedP50 = p50(attackedMs);
  ctx.note(`quiet one-line run p50 ${quietP50} ms [${quietMs.join(', ')}]`);
  ctx.note(`under a backlog of ${backlog} sleeping runs: p50 ${attackedP50} ms [${attackedMs.join(', ')}]`);
  ctx.note(`busy organization executing at most ${mostExecuting} at once (limit ${limit})`);
  const held = attackedP50 <= 2 * quietP50 + 1000 && mostExecuting <= limit && sawWaitingDetail && open === 0;
  return {
    held,
    result:
      `${backlog} sleeping runs: at most ${mostExecuting} executed at once, the rest waited` +
      `${sawWaitingDetail ? ' (WaitingForExecutionSlot)' : ' WITHOUT saying why'}; ` +
      `another org's one-line run p50 ${attackedP50} ms vs ${quietP50} ms quiet` +
      (open ? `; ${open} runs still open after cancel` : ''),
  };
}

export const attacks: MachineAttack[] = [
  { name: 'slot-hog', limit: 'ORG_MAX_CONCURRENT_RUNS (default WORKER_ACTIVITY_SLOTS/4)', run: fillTheSlots },
];

// GET /api/runs/stream: the organization's runs as they are created or change status, over SSE (woken by the
// notifications that name the organization, resumed with Last-Event-ID); and GET /api/runs/{id}/limits, the
// limits a run executes under: today's settings until its worker records its own with RUNNING.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities/run';
import { RUN_JOB } from '../../src/jobs/kinds';
import { transition } from '../../src/jobs/transition';
import { as, request } from '../harness/client';
import { structureWithBuild, structureWithoutBuild } from '../harness/builds';
import { aRun, waitForRun } from '../harness/runs';
import { readSse, sseBlocks } from '../harness/sse';
import { configWith, getStack, newTenant, startApi, startWorker } from '../harness/stack';

type Frame = { id: number; data: any; at: number };

/** Waits until `done` holds (checked every 20 ms), for at most `ms`. */
async function until(done: () => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** Reads the stream of run changes until `until` holds of the frames seen (or `ms` pass). */
async function changesUntil(
  key: string,
  until: (frames: Frame[]) => boolean,
  opts: { lastEventId?: number; ms?: number; whileOpen?: (frames: Frame[]) => Promise<void> } = {},
) {
  const abort = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = String(opts.lastEventId);
  const res = await fetch(`${getStack().baseUrl}/api/runs/stream`, { headers, signal: abort.signal });
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
  const frames: Frame[] = [];
  const timer = setTimeout(() => abort.abort(), opts.ms ?? 15_000);
  const reading = (async () => {
    try {
      for await (const block of sseBlocks(res.body!)) {
        if ('id' in block) frames.push({ ...block, at: Date.now() });
        if (until(frames)) return;
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
  })();
  await opts.whileOpen?.(frames);
  await reading;
  clearTimeout(timer);
  abort.abort();
  return frames;
}

describe('GET /api/runs/stream', function () {
  this.timeout(60_000);
  let key: string;
  let org: string;
  let structureId: string;
  let foreign: { organizationId: string; structureId: string };

  before(async () => {
    const tenant = await newTenant('run-changes');
    key = tenant.key;
    org = tenant.organizationId;
    structureId = await structureWithoutBuild(org);
    const other = await newTenant('run-changes-other');
    foreign = { organizationId: other.organizationId, structureId: await structureWithoutBuild(other.organizationId) };
  });

  const save = (run: Run) => getStack().ds.getRepository(Run).save(run);
  const newRun = (organizationId = org, resourceId = structureId, at?: Date) =>
    aRun({ kind: 'structure', organization_id: organizationId, resource_id: resourceId }, at);

  it("sends a run when it is created and at each status change, at once; never another organization's", async () => {
    const run = newRun();
    const foreignRun = newRun(foreign.organizationId, foreign.structureId);
    const times: Record<string, number> = {};
    const frames = await changesUntil(key, (f) => f.some((x) => x.data.status === 'RUNNING'), {
      // Each change once the one before was seen: changes that come together may be folded into one frame
      // (a frame is the run as it is when read).
      whileOpen: async (seen) => {
        const sent = (status: string) => seen.some((f) => f.data.run_id === run.run_id && f.data.status === status);
        await new Promise((r) => setTimeout(r, 300)); // the stream is attached
        await save(foreignRun);
        times.QUEUED = Date.now();
        await save(run);
        await until(() => sent('QUEUED'));
        times.STARTING = Date.now();
        await transition(getStack().ds, RUN_JOB, run.run_id, 'STARTING');
        await until(() => sent('STARTING'));
        times.RUNNING = Date.now();
        await transition(getStack().ds, RUN_JOB, run.run_id, 'RUNNING', { started_at: new Date() });
      },
    });
    const ours = frames.filter((f) => f.data.run_id === run.run_id);
    expect(frames.map((f) => f.data.run_id)).to.not.include(foreignRun.run_id);
    expect(ours.map((f) => f.data.status)).to.deep.equal(['QUEUED', 'STARTING', 'RUNNING']);
    expect(ours[0].data).to.include({
      kind: 'structure',
      resource_id: structureId,
      workflow_id: `structure-run-${run.run_id}`,
    });
    // Woken by the notifications, not the periodic re-check (SSE_RECHECK_MS, 5 s).
    for (const f of ours) expect(f.at - times[f.data.status], f.data.status).to.be.below(4000);
    const ids = frames.map((f) => f.id);
    expect(ids).to.deep.equal([...ids].sort((a, b) => a - b));
  });

  it('resumes after Last-Event-ID: a change made while disconnected comes first; older ones do not', async () => {
    const old = newRun(org, structureId, new Date(Date.now() - 60_000));
    await save(old);
    const run = newRun();
    const first = await changesUntil(key, (f) => f.some((x) => x.data.run_id === run.run_id), {
      whileOpen: async () => {
        await new Promise((r) => setTimeout(r, 300));
        await save(run);
      },
    });
    // From now (the last seconds first): the run changed a minute ago is not sent.
    expect(first.map((f) => f.data.run_id)).to.not.include(old.run_id);
    const lastId = first[first.length - 1].id;
    await transition(getStack().ds, RUN_JOB, run.run_id, 'CANCELLED');
    const resumed = await changesUntil(
      key,
      (f) => f.some((x) => x.data.run_id === run.run_id && x.data.status === 'CANCELLED'),
      {
        lastEventId: lastId,
        ms: 3000, // before any periodic re-check: the resume itself reads it
      },
    );
    expect(resumed.filter((f) => f.data.run_id === run.run_id).map((f) => f.data.status)).to.include('CANCELLED');
    // From long ago: the older run comes too, in the order of the changes.
    const fromOld = await changesUntil(key, (f) => f.some((x) => x.data.run_id === run.run_id), {
      lastEventId: (Date.now() - 120_000) * 1000,
    });
    const order = fromOld.map((f) => f.data.run_id);
    expect(order).to.include(old.run_id);
    expect(order.indexOf(old.run_id)).to.be.below(order.indexOf(run.run_id));
    // At most an hour back: a run changed 90 minutes ago is not sent to an id of two hours ago.
    const ancient = newRun(org, structureId, new Date(Date.now() - 90 * 60_000));
    await save(ancient);
    const fromAncient = await changesUntil(key, (f) => f.some((x) => x.data.run_id === run.run_id), {
      lastEventId: (Date.now() - 2 * 3600_000) * 1000,
    });
    expect(fromAncient.map((f) => f.data.run_id))
      .to.include(old.run_id)
      .and.not.include(ancient.run_id);
  });

  it('refuses a missing key and a malformed Last-Event-ID', async () => {
    expect((await request('GET', '/api/runs/stream')).status).to.equal(401);
    const bad = await readSse(`${getStack().baseUrl}/api/runs/stream`, key, { lastEventId: -1 });
    expect(bad.status).to.equal(400);
    expect(bad.body.type).to.be.a('string');
  });
});

describe('GET /api/runs/{run_id}/limits', () => {
  it("answers today's settings for a run not started; only the time limit for an assistant run", async () => {
    const t = await newTenant('run-limits-record');
    const { config, ds } = getStack();
    const structureRun = aRun({
      kind: 'function',
      organization_id: t.organizationId,
      resource_id: await structureWithoutBuild(t.organizationId, 'function'),
    });
    const assistant = await as(t.key).post('/api/assistants', { name: 'helper' });
    const assistantRun = aRun({
      kind: 'assistant',
      organization_id: t.organizationId,
      assistant_id: assistant.body.assistant_id,
    });
    await ds.getRepository(Run).save([structureRun, assistantRun]);

    const res = await as(t.key).get(`/api/runs/${structureRun.run_id}/limits`);
    expect(res.status, res.text).to.equal(200);
    const MiB = 1024 * 1024;
    const expected: Record<string, unknown> = {
      run_id: structureRun.run_id,
      kind: 'function',
      recorded: false,
      time_limit_seconds: config.runJob.timeLimitSeconds,
      sandbox: config.sandbox.mode,
      memory_mb: config.runLimits.memoryMb,
      log_bytes: config.runLimits.logBytes,
      result_bytes: config.runLimits.resultBytes,
    };
    if (config.sandbox.mode === 'on')
      Object.assign(expected, {
        max_processes: config.sandbox.maxProcesses,
        cpu_seconds: config.sandbox.cpuSeconds,
        max_open_files: config.sandbox.maxOpenFiles,
        max_run_open_files: config.sandbox.maxRunOpenFiles,
        file_mb: config.sandbox.fileBytes / MiB,
        disk_mb: config.sandbox.diskBytes / MiB,
        shm_mb: config.sandbox.shmBytes / MiB,
      });
    expect(res.body).to.deep.equal(expected);

    const assistantLimits = await as(t.key).get(`/api/runs/${assistantRun.run_id}/limits`);
    expect(assistantLimits.body).to.deep.equal({
      run_id: assistantRun.run_id,
      kind: 'assistant',
      recorded: false,
      time_limit_seconds: config.runJob.timeLimitSeconds,
    });

    const other = await newTenant('run-limits-other');
    expect((await as(other.key).get(`/api/runs/${structureRun.run_id}/limits`)).status).to.equal(404);
    expect((await as(t.key).get('/api/runs/not-a-uuid/limits')).status).to.equal(400);
  });

  it('records, when the run starts, the limits its worker enforces and the time limit it was created with', async () => {
    // An api and a worker of their own, set differently: the time limit is the creating api's, the rest the worker's.
    const queue = `run-limits-${randomUUID().slice(0, 8)}`;
    const worker = await startWorker(configWith({ TEMPORAL_TASK_QUEUE: queue, RUN_MEMORY_LIMIT_MB: '1536' }));
    const ownApi = await startApi(
      getStack().env.client,
      0,
      configWith({ TEMPORAL_TASK_QUEUE: queue, RUN_TIME_LIMIT_SECONDS: '321' }),
    );
    try {
      const t = await newTenant('run-limits-started');
      const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': 'print("hi")' } });
      const created = await as(t.key, ownApi.baseUrl).post(`/api/structures/${structureId}/runs`, { args: [] });
      expect(created.status, created.text).to.equal(201);
      const runId = created.body.structure_run_id;
      const run = await waitForRun(t.key, runId, undefined, 30_000, ownApi.baseUrl);
      expect(run.status, JSON.stringify(run)).to.equal('SUCCEEDED');
      const limits = await as(t.key).get(`/api/runs/${runId}/limits`);
      expect(limits.status, limits.text).to.equal(200);
      expect(limits.body).to.include({ recorded: true, time_limit_seconds: 321, memory_mb: 1536 });
      const { sandbox } = getStack().activityDeps;
      expect(limits.body).to.include({ isolation: sandbox.mode, memory_scope: sandbox.memoryScope });
    } finally {
      await ownApi.close();
      await worker.close();
    }
  });
});

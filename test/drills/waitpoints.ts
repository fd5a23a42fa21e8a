// Drill: assistant runs waiting on waitpoints (docs/waitpoints.md) through a worker SIGKILL and a Temporal restart.
// `runs` assistant runs call a tool that requires approval and wait, holding no execution slot; the worker is
// killed and another started, and the Temporal dev server (its own, on its SQLite file) is stopped and started
// again; then every waitpoint is approved through the API. Every run ends SUCCEEDED having made its call exactly
// once, every waitpoint is COMPLETED once, and no slot was held while they waited.
import fs from 'node:fs';
import path from 'node:path';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { CALCULATOR_TOOL } from '../harness/runs';
import { freePort, getStack, newTenant } from '../harness/stack';
import { DrillReport, Findings, tempDir, until } from './kit';
import { Processes, startApiProcess, startTemporalDevServer, startWorkerProcess } from './processes';

export interface WaitpointsDrillOptions {
  runs: number;
}

export async function waitpointsDrill(opts: WaitpointsDrillOptions = { runs: 50 }): Promise<DrillReport> {
  const f = new Findings(
    'waitpoints',
    `${opts.runs} assistant runs waiting for approval through a worker SIGKILL and a Temporal restart`,
  );
  const { ds, modelProvider: provider } = getStack();
  const dir = tempDir('waitpoints');
  const procs = new Processes();
  try {
    const server = { dbFile: path.join(dir, 'temporal.sqlite'), port: await freePort() };
    let temporal = await startTemporalDevServer(procs, { ...server, name: 'temporal-1' });
    const address = `127.0.0.1:${server.port}`;
    const env = { TEMPORAL_ADDRESS: address, MODEL_PROVIDERS: `local=${provider.baseUrl}` };
    const api = await startApiProcess(procs, 'api', env);
    const workerEnv = { ...env, RUN_API_BASE_URL: api.baseUrl };
    let worker = await startWorkerProcess(procs, 'worker-1', workerEnv);

    const t = await newTenant('drill-waitpoints');
    const http = as(t.key, api.baseUrl);
    const tool = await structureWithBuild(t.organizationId, {
      kind: 'tool',
      files: { 'tool.py': CALCULATOR_TOOL },
      mainFile: 'tool.py',
      name: 'calc',
    });
    const patched = await http.patch(`/api/tools/${tool.structureId}`, { requires_approval: true });
    if (patched.status !== 200) throw new Error(`requiring approval answered ${patched.status} ${patched.text}`);
    const assistant = await http.post('/api/assistants', { name: 'Careful', tool_ids: [tool.structureId] });
    const model = provider.uniqueModel('drill-waitpoints');
    // Each run: the model calls the tool, then answers with what it said.
    const script = {
      model,
      times: Infinity,
      respond: (body: { messages: Array<Record<string, any>> }) =>
        body.messages.at(-1)!.role === 'tool'
          ? { text: `The tool said ${body.messages.at(-1)!.content}` }
          : { toolCalls: [{ name: 'Calculator_divide', arguments: '{"a": 9, "b": 3}' }] },
    };
    provider.script(script);

    const runIds: string[] = [];
    for (let i = 0; i < opts.runs; i++) {
      const res = await http.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
        input: `run ${i}`,
        model: `local/${model}`,
      });
      if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
      runIds.push(res.body.assistant_run_id);
    }
    const waiting = async () =>
      (
        await ds.query(
          `SELECT count(*)::int AS n FROM waitpoints WHERE run_id = ANY($1::uuid[]) AND status = 'WAITING'`,
          [runIds],
        )
      )[0].n as number;
    await until(`all ${opts.runs} runs to wait for approval`, 180_000, async () =>
      (await waiting()) === opts.runs ? true : undefined,
    );
    const held = async () =>
      (
        await ds.query(
          `SELECT count(*)::int AS n FROM execution_slots WHERE job_id = ANY($1::uuid[]) AND state = 'HOLDING'`,
          [runIds],
        )
      )[0].n as number;
    await until('the waiting runs to give their slots back', 30_000, async () =>
      (await held()) === 0 ? true : undefined,
    );
    f.checked++;

    // The faults, while every run waits: a worker SIGKILL (another starts), then a Temporal stop and start.
    await procs.kill(worker, 'SIGKILL');
    f.faults++;
    worker = await startWorkerProcess(procs, 'worker-2', workerEnv);
    await procs.kill(temporal, 'SIGTERM');
    f.faults++;
    temporal = await startTemporalDevServer(procs, { ...server, name: 'temporal-2' });
    if ((await held()) !== 0) f.violation('a waiting run held an execution slot after the faults');
    f.count('slotsHeldWhileWaiting', await held());

    // Every waitpoint approved through the API (retried while the api reconnects to Temporal).
    const waitpoints: Array<{ waitpoint_id: string }> = await ds.query(
      `SELECT waitpoint_id FROM waitpoints WHERE run_id = ANY($1::uuid[])`,
      [runIds],
    );
    for (const w of waitpoints) {
      await until(`waitpoint ${w.waitpoint_id} to be completed`, 60_000, async () => {
        const res = await http.post(`/api/waitpoints/${w.waitpoint_id}/complete`, { approved: true });
        f.checked++;
        return res.status === 200 ? true : undefined;
      });
    }
    await until(
      'every run to end',
      180_000,
      async () => {
        const open = await ds.query(
          `SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1::uuid[]) AND completed_at IS NULL`,
          [runIds],
        );
        return open[0].n === 0 ? true : undefined;
      },
      250,
    ).catch((err: Error) => f.violation(err.message));

    const ended: Array<{ status: string; n: number }> = await ds.query(
      `SELECT status, count(*)::int AS n FROM runs WHERE run_id = ANY($1::uuid[]) GROUP BY status`,
      [runIds],
    );
    const succeeded = ended.find((e) => e.status === 'SUCCEEDED')?.n ?? 0;
    f.missing(opts.runs - succeeded, `runs (ended ${JSON.stringify(ended)})`);
    // Exactly once: one tool call started, one approval, one COMPLETED waitpoint per run.
    const calls: Array<{ run_id: string; started: number; approved: number }> = await ds.query(
      `SELECT r.run_id,
              count(*) FILTER (WHERE e.type = 'AssistantToolCallStarted')::int AS started,
              count(*) FILTER (WHERE e.type = 'AssistantToolCallApproved')::int AS approved
         FROM runs r LEFT JOIN run_events e ON e.run_id = r.run_id
        WHERE r.run_id = ANY($1::uuid[]) GROUP BY r.run_id`,
      [runIds],
    );
    f.checked += calls.length;
    f.twice(calls.filter((c) => c.started > 1).length, 'tool calls (a run called its tool twice)');
    f.twice(calls.filter((c) => c.approved > 1).length, 'approvals (a waitpoint settled twice)');
    f.missing(calls.filter((c) => c.started === 0).length, 'tool calls (an approved call never ran)');
    const toolRuns = await ds.query(
      `SELECT count(*)::int AS n FROM runs WHERE resource_id = $1 AND input->>'activity' = 'divide'`,
      [tool.structureId],
    );
    f.twice(toolRuns[0].n - opts.runs, 'tool runs');
    const completed = await ds.query(
      `SELECT count(*)::int AS n FROM waitpoints WHERE run_id = ANY($1::uuid[]) AND status = 'COMPLETED'`,
      [runIds],
    );
    f.missing(opts.runs - completed[0].n, 'completed waitpoints');
    f.count('runs', opts.runs);
    provider.withdraw(script);
  } finally {
    await procs.stopAll(f);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return f.report();
}

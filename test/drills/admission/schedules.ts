// A schedule firing every second, with its worker SIGKILLed midway and a new one started, makes exactly one
// run per nominal time (docs/run-control.md#schedules): as many runs as Temporal took fires, each with the id
// derived from its schedule and nominal time, none doubled, none made outside a fire.
import { randomUUID } from 'node:crypto';
import { WORKFLOW_TYPES } from '../../../src/temporal/contracts';
import { runScheduleId } from '../../../src/temporal/run-schedules';
import { scheduledRunId } from '../../../src/services/schedules/fire';
import { structureWithBuild } from '../../harness/builds';
import { as } from '../../harness/client';
import { newTenant } from '../../harness/stack';
import { Findings, sleep, until } from '../kit';
import { Processes, startApiProcess, startWorkerProcess } from '../processes';
import type { AdmissionCheck } from './kit';

const PROGRAM = 'import time\ntime.sleep(0.5)\nprint("fired")\n';
const NOMINAL = /-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/;

export const checks: AdmissionCheck[] = [
  {
    name: 'schedules',
    promise: 'a 1 s schedule across a worker SIGKILL: one run per nominal time, none doubled',
    async run({ stack, quick, note }) {
      const seconds = quick ? 12 : 60;
      const procs = new Processes();
      const queue = `drill-schedules-${randomUUID().slice(0, 8)}`;
      const problems: string[] = [];
      try {
        // The api names the task queue in the schedule's action; runs presume a silent worker lost after 2 s.
        const api = await startApiProcess(procs, 'api', {
          TEMPORAL_TASK_QUEUE: queue,
          RUN_HEARTBEAT_TIMEOUT_SECONDS: '2',
          SCHEDULE_MIN_INTERVAL_SECONDS: '1',
        });
        const workerEnv = { TEMPORAL_TASK_QUEUE: queue, RUN_API_BASE_URL: api.baseUrl };
        const victim = await startWorkerProcess(procs, 'worker-1', workerEnv);
        const t = await newTenant('drill-schedules');
        const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': PROGRAM } });
        const client = as(t.key, api.baseUrl);
        const base = `/api/structures/${s.structureId}/schedules`;
        // allow_all: every nominal time gets a fire, however long the runs of the others take.
        const created = await client.post(base, { schedule_expression: 'rate(1 second)', overlap_policy: 'allow_all' });
        if (created.status !== 201) throw new Error(`creating the schedule answered ${created.status} ${created.text}`);
        const id: string = created.body.schedule_id;

        await sleep((seconds / 2) * 1000);
        await procs.kill(victim, 'SIGKILL');
        const killedAt = Date.now();
        await sleep(quick ? 2_000 : 5_000);
        await startWorkerProcess(procs, 'worker-2', workerEnv);
        await sleep(Math.max(0, (seconds / 2) * 1000 - (Date.now() - killedAt)));
        const paused = await client.post(`${base}/${id}/pause`, {});
        if (paused.status !== 200) throw new Error(`pausing answered ${paused.status} ${paused.text}`);

        // Every fire's workflow closes once its run has ended (fires lost with the worker resume on the new one).
        // Read from visibility: with allow_all Temporal does not follow the fires it started (runningActions).
        const taken = (await stack.env.client.schedule.getHandle(runScheduleId(id)).describe()).info.numActionsTaken;
        const fires: string[] = [];
        const query = `WorkflowType = '${WORKFLOW_TYPES.scheduledRun}' AND TarmacResourceId = '${id}'`;
        await until(
          'every fire to close',
          180_000,
          async () => {
            fires.length = 0;
            let open = 0;
            for await (const w of stack.env.client.workflow.list({ query })) {
              fires.push(w.workflowId);
              if (w.status.name === 'RUNNING') open++;
            }
            return fires.length >= taken && open === 0 ? true : undefined;
          },
          500,
        ).catch((err: Error) => problems.push(`${err.message} (${fires.length} listed of ${taken})`));
        const nominal = new Set(fires.map((w) => NOMINAL.exec(w)?.[1]).filter((x): x is string => !!x));
        const expected = new Set([...nominal].map((n) => scheduledRunId(id, new Date(n))));

        const runs: Array<{ run_id: string; created_by: string; status: string }> = await stack.ds.query(
          `SELECT run_id, created_by, status FROM runs WHERE resource_id = $1`,
          [s.structureId],
        );
        const strays = runs.filter((r) => !expected.has(r.run_id) || r.created_by !== `schedule:${id}`);
        const missing = [...expected].filter((runId) => !runs.some((r) => r.run_id === runId));
        if (nominal.size !== fires.length) problems.push(`${fires.length} fires for ${nominal.size} nominal times`);
        if (strays.length) problems.push(`${strays.length} runs not of one fire each: ${JSON.stringify(strays)}`);
        if (missing.length) problems.push(`${missing.length} fires without a run`);
        if (runs.length !== taken) problems.push(`${runs.length} runs for ${taken} fires Temporal took`);
        const byStatus = runs.reduce<Record<string, number>>(
          (m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }),
          {},
        );
        note(`fires taken ${taken}, runs ${runs.length} (${JSON.stringify(byStatus)})`);
        return {
          held: problems.length === 0,
          faults: 1,
          result:
            `${seconds} s at 1/s, worker killed at ${seconds / 2} s: ${taken} fires, ${nominal.size} nominal times, ` +
            `${runs.length} runs` +
            (problems.length ? `; ${problems.join('; ')}` : ''),
        };
      } finally {
        const f = new Findings('schedules', 'processes');
        await procs.stopAll(f);
        if (f.violations.length) note(f.violations.join('; '));
      }
    },
  },
];

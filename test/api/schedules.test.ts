// Schedules of structures, functions and assistants (docs/run-control.md#schedules) through the public api:
// CRUD with the next fire times Temporal computes, validation, pause/resume/trigger kept in step with the
// Temporal Schedule, fires that make ordinary runs `created_by: schedule:<id>`, and a retried fire that makes none.
import { ScheduleNotFoundError } from '@temporalio/client';
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { PY_PRELUDE, TERMINAL } from '../harness/runs';
import { startApiWithSecondSchedules } from '../harness/schedules';
import { getStack, newTenant } from '../harness/stack';
import { createScheduledRun, scheduledRunId } from '../../src/services/schedules/fire';
import { runScheduleId } from '../../src/temporal/run-schedules';

const ARGS_PROGRAM = `${PY_PRELUDE}
print("args " + json.dumps(sys.argv[1:]))
`;
const FUNCTION_PY = 'def handler(event):\n    return {"got": event["body"]}\n';

const describeSchedule = (id: string) => getStack().env.client.schedule.getHandle(runScheduleId(id)).describe();
/** Temporal's paused state once it shows (pause is a signal to the schedule; a describe may come first). */
async function pausedInTemporal(id: string, expected: boolean): Promise<boolean> {
  // A Schedule's state is its scheduler workflow's, which applies the pause signal in its own time: under CI's
  // load (test files side by side) that took more than 10 s once.
  for (let deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 200))) {
    const paused = (await describeSchedule(id)).state.paused;
    if (paused === expected || Date.now() > deadline) return paused;
  }
}

/** The runs `list` answers until one matches, bounded. */
async function waitForList<T>(list: () => Promise<T[]>, done: (items: T[]) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = await list();
    if (done(items) || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('schedules', function () {
  this.timeout(180_000);
  let secondsApi: Awaited<ReturnType<typeof startApiWithSecondSchedules>>;
  before(async () => (secondsApi = await startApiWithSecondSchedules()));
  after(() => secondsApi.close());

  it('CRUD: defaults, validation, the next 5 fire times in the time zone, pause/resume/delete in step with Temporal', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ARGS_PROGRAM } });
    const base = `/api/structures/${s.structureId}/schedules`;

    const created = await api.post(base, {
      schedule_expression: '0 9 * * MON-FRI',
      time_zone: 'Europe/Paris',
      args: ['a'],
    });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.schedule_id;
    expect(created.body).to.include({
      resource_kind: 'structure',
      resource_id: s.structureId,
      time_zone: 'Europe/Paris',
      enabled: true,
      overlap_policy: 'skip',
      catchup_window_seconds: 60,
    });
    const fires: string[] = created.body.next_fire_times;
    expect(fires).to.have.length(5);
    for (const f of fires) {
      const paris = new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Paris',
        hour: '2-digit',
        minute: '2-digit',
        weekday: 'short',
      }).format(new Date(f));
      expect(paris).to.match(/^(Mon|Tue|Wed|Thu|Fri) 09:00$/);
    }
    expect([...fires].sort()).to.deep.equal(fires);

    // In Temporal: the spec in the zone, the overlap policy, a 60 s catch-up window, searchable attributes.
    const d = await describeSchedule(id);
    expect(d.spec.timezone).to.equal('Europe/Paris');
    expect(d.policies.overlap).to.equal('SKIP');
    expect(d.policies.catchupWindow).to.equal(60_000);
    expect(d.state.paused).to.equal(false);
    const attributes = Object.fromEntries(d.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));
    expect(attributes).to.include({
      TarmacResourceId: id,
      TarmacOrganizationId: t.organizationId,
      TarmacResourceKind: 'run-schedule',
    });

    // Validation: 400 for what the schema or the service refuses; 404 for other organizations and unknown ids.
    for (const bad of [
      { schedule_expression: 'every minute' },
      { schedule_expression: '* * * * *', time_zone: 'Mars/Olympus' },
      { schedule_expression: '* * * * *', time_zone: '+02:00' },
      { schedule_expression: '* * * * *', overlap_policy: 'sometimes' },
      { schedule_expression: '* * * * *', catchup_window_seconds: 5 },
      { schedule_expression: '* * * * *', input: { not: 'for structures' } },
      // Below SCHEDULE_MIN_INTERVAL_SECONDS (a minute by default).
      { schedule_expression: 'rate(30 seconds)' },
    ]) {
      const res = await api.post(base, bad);
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
    }
    expect((await api.post(base, { schedule_expression: 'rate(59 seconds)' })).text).to.include(
      'SCHEDULE_MIN_INTERVAL_SECONDS',
    );
    const other = await newTenant('other');
    expect((await as(other.key).get(`${base}/${id}`)).status).to.equal(404);
    expect((await as(other.key).post(base, { schedule_expression: '* * * * *' })).status).to.equal(404);
    expect((await api.get(`${base}/${s.deploymentId}`)).status).to.equal(404);
    // A schedule is reached only through its own resource.
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': FUNCTION_PY },
      mainFile: 'main.py',
    });
    expect((await api.get(`/api/functions/${fn.structureId}/schedules/${id}`)).status).to.equal(404);

    const list = await api.get(base);
    expect(list.status, list.text).to.equal(200);
    expect(list.body.schedules.map((x: any) => x.schedule_id)).to.deep.equal([id]);
    expect(list.body.pagination).to.include({ total_count: 1 });

    const patched = await api.patch(`${base}/${id}`, {
      schedule_expression: 'rate(2 hours)',
      overlap_policy: 'allow_all',
      catchup_window_seconds: 120,
    });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body).to.include({ schedule_expression: 'rate(2 hours)', overlap_policy: 'allow_all' });
    const gaps = patched.body.next_fire_times.map((f: string, i: number, all: string[]) =>
      i ? Date.parse(f) - Date.parse(all[i - 1]) : 7_200_000,
    );
    expect(gaps).to.deep.equal([7_200_000, 7_200_000, 7_200_000, 7_200_000, 7_200_000]);
    const changed = await describeSchedule(id);
    expect(changed.policies).to.include({ overlap: 'ALLOW_ALL', catchupWindow: 120_000 });

    const paused = await api.post(`${base}/${id}/pause`, {});
    expect(paused.status, paused.text).to.equal(200);
    expect(paused.body).to.include({ enabled: false });
    expect(paused.body.next_fire_times).to.deep.equal([]);
    expect(await pausedInTemporal(id, true)).to.equal(true);
    const resumed = await api.post(`${base}/${id}/resume`, {});
    expect(resumed.body).to.include({ enabled: true });
    expect(resumed.body.next_fire_times).to.have.length(5);
    expect(await pausedInTemporal(id, false)).to.equal(false);
    // enabled in a PATCH is the same as pause.
    expect((await api.patch(`${base}/${id}`, { enabled: false })).body.enabled).to.equal(false);
    expect(await pausedInTemporal(id, true)).to.equal(true);

    expect((await api.delete(`${base}/${id}`)).status).to.equal(204);
    expect((await api.get(`${base}/${id}`)).status).to.equal(404);
    let gone: unknown;
    await describeSchedule(id).catch((err) => (gone = err));
    expect(gone).to.be.instanceOf(ScheduleNotFoundError);
  });

  it('a fire is an ordinary run created_by schedule:<id>: structures get args, functions input; trigger fires now, a lost Schedule made again', async () => {
    const t = await newTenant();
    const api = as(t.key, secondsApi.baseUrl);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ARGS_PROGRAM } });
    const fn = await structureWithBuild(t.organizationId, {
      kind: 'function',
      files: { 'main.py': FUNCTION_PY },
      mainFile: 'main.py',
    });

    // Every second: a few fires, each a run with the schedule's args.
    const every = await api.post(`/api/structures/${s.structureId}/schedules`, {
      schedule_expression: 'rate(1 second)',
      args: ['from', 'schedule'],
    });
    expect(every.status, every.text).to.equal(201);
    const runsOf = async () =>
      (await api.get(`/api/structures/${s.structureId}/runs?page_size=100`)).body.structure_runs as any[];
    const runs = await waitForList(runsOf, (r) => r.filter((x) => x.status === 'SUCCEEDED').length >= 2);
    await api.post(`/api/structures/${s.structureId}/schedules/${every.body.schedule_id}/pause`, {});
    const done = runs.filter((r) => r.status === 'SUCCEEDED');
    expect(done.length).to.be.at.least(2);
    for (const r of done) {
      expect(r.created_by).to.equal(`schedule:${every.body.schedule_id}`);
      expect(r.args).to.deep.equal(['from', 'schedule']);
      const logs = await api.get(`/api/structure-runs/${r.structure_run_id}/logs`);
      expect(logs.body.logs).to.deep.equal(['args ["from", "schedule"]']);
    }

    // A function schedule, paused, triggered now: one run with the schedule's input as the event's body.
    const fnBase = `/api/functions/${fn.structureId}/schedules`;
    const daily = await api.post(fnBase, { schedule_expression: 'cron(0 3 * * ? *)', input: { n: 1 }, enabled: false });
    expect(daily.status, daily.text).to.equal(201);
    // Temporal lost the Schedule (deleted behind our back): the trigger makes it again, paused as the row says.
    await getStack().env.client.schedule.getHandle(runScheduleId(daily.body.schedule_id)).delete();
    const triggered = await api.post(`${fnBase}/${daily.body.schedule_id}/trigger`, {});
    expect(triggered.status, triggered.text).to.equal(202);
    expect(triggered.body.next_fire_times).to.deep.equal([]);
    expect((await describeSchedule(daily.body.schedule_id)).state.paused).to.equal(true);
    const fnRuns = await waitForList(
      async () => (await api.get(`/api/functions/${fn.structureId}/runs`)).body.function_runs as any[],
      (r) => r.length === 1 && TERMINAL.includes(r[0].status),
    );
    expect(fnRuns).to.have.length(1);
    expect(fnRuns[0]).to.include({ status: 'SUCCEEDED', created_by: `schedule:${daily.body.schedule_id}` });
    expect(fnRuns[0].output).to.deep.equal({ got: { n: 1 } });

    // Deleting the function deletes its schedules, in Temporal too.
    expect((await api.delete(`/api/functions/${fn.structureId}`)).status).to.equal(204);
    let gone: unknown;
    await describeSchedule(daily.body.schedule_id).catch((err) => (gone = err));
    expect(gone).to.be.instanceOf(ScheduleNotFoundError);
  });

  it('a retried fire finds the run of its nominal time instead of making another', async () => {
    const t = await newTenant();
    const api = as(t.key);
    const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': ARGS_PROGRAM } });
    const created = await api.post(`/api/structures/${s.structureId}/schedules`, {
      schedule_expression: '0 0 1 1 *',
      enabled: false,
    });
    const id = created.body.schedule_id;
    const nominal = new Date('2026-01-01T00:00:00Z');
    const deps = { ...getStack().activityDeps };
    // Ten attempts at once and one after: one run, with the id derived from the schedule and the nominal time.
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => createScheduledRun(deps, id, nominal)));
    outcomes.push(await createScheduledRun(deps, id, nominal));
    const runId = scheduledRunId(id, nominal);
    expect(outcomes).to.deep.equal(outcomes.map(() => ({ runId })));
    const runs = (await api.get(`/api/structures/${s.structureId}/runs`)).body.structure_runs;
    expect(runs.map((r: any) => r.structure_run_id)).to.deep.equal([runId]);
    // Another nominal time is another run.
    const next = await createScheduledRun(deps, id, new Date('2026-01-02T00:00:00Z'));
    expect(next).to.not.deep.equal({ runId });

    // A fire of a deleted schedule (its row gone while Temporal fired) makes no run and removes the Temporal side.
    expect((await api.delete(`/api/structures/${s.structureId}/schedules/${id}`)).status).to.equal(204);
    const late = await createScheduledRun(deps, id, new Date('2026-01-03T00:00:00Z'));
    expect(late).to.have.property('skipped');
  });
});

// The overlap policies of schedules (workflows/scheduled-run.ts), against the stack's Temporal dev server with
// a 1-second schedule and runs of 4 s. Not time-skipping: the Java test server has no Schedules (its service
// leaves them unimplemented; sdk-java#1954, closed as "use a real server"), so the real server fires them.
// Each case waits for the first run, lets two or three more fires come while it is open, pauses, and reads
// the runs: skip makes one and skips the rest, buffer_one runs one buffered fire after it, allow_all runs
// them side by side, cancel_other cancels the open run for the newer one.
import { expect } from 'chai';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { SLEEP_PROGRAM, TERMINAL } from '../harness/runs';
import { startApiWithSecondSchedules } from '../harness/schedules';
import { getStack, newTenant } from '../harness/stack';
import { runScheduleId } from '../../src/temporal/run-schedules';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let secondsApi: Awaited<ReturnType<typeof startApiWithSecondSchedules>>;

interface Observed {
  runs: any[];
  skipped: number;
  /** How long each fire Temporal took waited after its nominal time (ms). */
  waits: number[];
}

const firstEnded = (runs: any[]) => TERMINAL.includes(runs[0]?.status);

/** Fires every second until `enough` (default: the first run has ended) and a moment more, then pauses and waits for every run. */
async function fireWhileOpen(policy: string, enough = firstEnded): Promise<Observed> {
  const t = await newTenant(`overlap-${policy}`);
  const api = as(t.key, secondsApi.baseUrl);
  const s = await structureWithBuild(t.organizationId, { files: { 'structure.py': SLEEP_PROGRAM } });
  const base = `/api/structures/${s.structureId}/schedules`;
  const created = await api.post(base, { schedule_expression: 'rate(1 second)', args: ['3'], overlap_policy: policy });
  expect(created.status, created.text).to.equal(201);
  const id = created.body.schedule_id;
  const runsOf = async () =>
    ((await api.get(`/api/structures/${s.structureId}/runs?page_size=100`)).body.structure_runs as any[]).sort(
      (a, b) => Date.parse(a.created_at) - Date.parse(b.created_at),
    );
  for (let deadline = Date.now() + 90_000; !enough(await runsOf()); await sleep(100)) {
    if (Date.now() > deadline) throw new Error(`${policy}: the runs did not come within 90 s`);
  }
  await sleep(1_500); // a buffered fire starts once the first run's fire has closed
  expect((await api.post(`${base}/${id}/pause`, {})).status).to.equal(200);
  const handle = getStack().env.client.schedule.getHandle(runScheduleId(id));
  for (let deadline = Date.now() + 120_000; ; await sleep(250)) {
    const [runs, d] = await Promise.all([runsOf(), handle.describe()]);
    if (d.info.runningActions.length === 0 && runs.every((r) => TERMINAL.includes(r.status))) {
      const waits = d.info.recentActions.map((a) => a.takenAt.getTime() - a.scheduledAt.getTime());
      return { runs, skipped: d.info.numActionsSkippedOverlap, waits };
    }
    if (Date.now() > deadline) throw new Error(`runs still open: ${JSON.stringify(runs.map((r) => r.status))}`);
  }
}

/** Whether some run started before the one made before it ended. */
const overlapping = (runs: any[]) =>
  runs.some((r, i) => i > 0 && Date.parse(r.started_at) < Date.parse(runs[i - 1].completed_at));
const statuses = (runs: any[]) => JSON.stringify(runs.map((r) => [r.status, r.status_detail]));

describe('scheduled runs: overlap policies (Temporal dev server)', function () {
  this.timeout(180_000);
  before(async () => (secondsApi = await startApiWithSecondSchedules()));
  after(() => secondsApi.close());

  it('skip (the default): no run while one is open; the fires meanwhile are skipped', async () => {
    const { runs, skipped } = await fireWhileOpen('skip');
    expect(
      runs.every((r) => r.status === 'SUCCEEDED'),
      statuses(runs),
    ).to.equal(true);
    expect(overlapping(runs)).to.equal(false);
    expect(skipped).to.be.at.least(1);
  });

  it('buffer_one: one fire waits for the open run and starts when it ends; the rest are skipped', async () => {
    const { runs, skipped, waits } = await fireWhileOpen('buffer_one');
    expect(runs.length).to.be.at.least(2);
    expect(
      runs.every((r) => r.status === 'SUCCEEDED'),
      statuses(runs),
    ).to.equal(true);
    expect(overlapping(runs)).to.equal(false);
    expect(skipped).to.be.at.least(1);
    // The buffered fire was taken seconds after its nominal time, when the run before it had ended.
    expect(Math.max(...waits)).to.be.at.least(1_500);
  });

  it('allow_all: every fire runs, side by side', async () => {
    // Two runs started: enough to see them side by side (more would only load the machine).
    const { runs, skipped } = await fireWhileOpen('allow_all', (r) => r.filter((x) => x.started_at).length >= 2);
    expect(runs.length).to.be.at.least(2);
    // None cancelled or lost: each ran to its end (how its process exited is not the policy's business).
    expect(
      runs.every((r) => ['SUCCEEDED', 'FAILED'].includes(r.status)),
      statuses(runs),
    ).to.equal(true);
    expect(overlapping(runs)).to.equal(true);
    expect(skipped).to.equal(0);
  });

  it('cancel_other: a newer fire cancels the open run, which ends CANCELLED before the next starts', async () => {
    const { runs } = await fireWhileOpen('cancel_other');
    expect(runs.length).to.be.at.least(2);
    // Which run the first newer fire finds open depends on when Temporal takes it: on a loaded machine a fire
    // may come after the 3 s the run before it lasted, which then ended SUCCEEDED.
    const cancelled = runs.filter((r) => r.status === 'CANCELLED');
    expect(cancelled.length, statuses(runs)).to.be.at.least(1);
    for (const r of cancelled) expect(r.status_detail.requested_by).to.match(/^schedule:/);
    expect(
      runs.every((r) => ['CANCELLED', 'SUCCEEDED'].includes(r.status)),
      statuses(runs),
    ).to.equal(true);
    expect(overlapping(runs)).to.equal(false);
  });
});

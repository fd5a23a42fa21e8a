// GET /api/dashboards/structures over rows with known timestamps, inserted directly for fresh tenants; the token
// gauge also over events posted the way griptape's GriptapeCloudEventListenerDriver posts them (a real griptape
// structure's FinishPromptEvent through the whole chain: test/compat/test_griptape_dashboard.py).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { as } from '../harness/client';
import { getStack, newTenant } from '../harness/stack';

const at = (hms: string) => new Date(`2026-01-01T${hms}Z`);
const WINDOW = 'start_time=2026-01-01T00:00:00Z&end_time=2026-01-02T00:00:00Z';

async function structure(organizationId: string): Promise<string> {
  const id = randomUUID();
  await getStack().ds.query(
    `INSERT INTO code_resources (resource_id, kind, organization_id, name, description, code, config_file, env_vars,
       webhook_enabled, latest_deployment_id, created_by, created_at, updated_at)
     VALUES ($1, 'structure', $2, 's', '', '{"default":{}}', NULL, '[]', false, NULL, 'test', $3, $3)`,
    [id, organizationId, at('00:00:00')],
  );
  return id;
}

async function run(
  organizationId: string,
  resourceId: string,
  r: {
    status: string;
    created: Date;
    started?: Date;
    completed?: Date;
    detail?: unknown;
    usage?: unknown[];
  },
): Promise<string> {
  const { ds } = getStack();
  const id = randomUUID();
  await ds.query(
    `INSERT INTO runs (run_id, kind, organization_id, resource_id, status, status_detail, started_at, completed_at, created_by, created_at, updated_at)
     VALUES ($1, 'structure', $2, $3, $4, $5, $6, $7, 'test', $8, $8)`,
    [
      id,
      organizationId,
      resourceId,
      r.status,
      r.detail === undefined ? null : JSON.stringify(r.detail),
      r.started ?? null,
      r.completed ?? null,
      r.created,
    ],
  );
  for (const [i, payload] of (r.usage ?? []).entries()) {
    await ds.query(
      `INSERT INTO run_events (event_id, run_id, seq, organization_id, type, origin, payload, timestamp, created_at)
       VALUES ($1, $2, $3, $4, 'FinishStructureRunEvent', 'USER', $5, 0, now())`,
      [randomUUID(), id, i + 1, organizationId, JSON.stringify(payload)],
    );
  }
  return id;
}

async function deployment(organizationId: string, resourceId: string, status: string, created: Date, completed?: Date) {
  await getStack().ds.query(
    `INSERT INTO deployments (deployment_id, organization_id, resource_id, resource_kind, status, code_source, created_by, created_at, updated_at, completed_at)
     VALUES ($1, $2, $3, 'structure', $4, '{"default":{}}', 'test', $5, $5, $6)`,
    [randomUUID(), organizationId, resourceId, status, created, completed ?? null],
  );
}

describe('structures dashboard', () => {
  let t: Awaited<ReturnType<typeof newTenant>>;
  let a: string;
  let b: string;

  before(async () => {
    t = await newTenant('dash');
    const org = t.organizationId;
    a = await structure(org);
    b = await structure(org);
    await run(org, a, {
      status: 'SUCCEEDED',
      created: at('10:00:00'),
      started: at('10:00:02'),
      completed: at('10:00:12'),
      usage: [{ model: 'gpt-4o', usage: { input_tokens: 100, output_tokens: 20 } }, { note: 'no usage here' }],
    });
    await run(org, a, {
      status: 'FAILED',
      created: at('10:30:00'),
      started: at('10:30:01'),
      completed: at('10:30:31'),
      detail: { reason: 'OutOfMemory' },
      usage: [{ usage: { input_tokens: 5, output_tokens: 1, model: 'claude' } }, 'text payload'],
    });
    await run(org, a, {
      status: 'ERROR',
      created: at('11:15:00'),
      started: at('11:15:03'),
      completed: at('11:15:23'),
      detail: { error: 'boom' },
    });
    await run(org, a, { status: 'CANCELLED', created: at('11:20:00'), completed: at('11:21:00') });
    await run(org, a, { status: 'RUNNING', created: at('11:40:00'), started: at('11:40:05') });
    await run(org, a, { status: 'QUEUED', created: at('11:50:00') });
    await run(org, b, {
      status: 'SUCCEEDED',
      created: at('12:00:00'),
      started: at('12:00:00'),
      completed: at('12:00:40'),
      usage: [{ model: 'gpt-4o', usage: { input_tokens: 1, output_tokens: 2 } }],
    });
    // Outside the window (end_time is exclusive).
    await run(org, b, {
      status: 'FAILED',
      created: new Date('2026-01-02T00:00:00Z'),
      started: new Date('2026-01-02T00:00:01Z'),
      completed: new Date('2026-01-02T00:00:09Z'),
      usage: [{ model: 'gpt-4o', usage: { input_tokens: 1000, output_tokens: 1000 } }],
    });

    await deployment(org, a, 'SUCCEEDED', at('09:00:00'), at('09:01:00'));
    await deployment(org, a, 'FAILED', at('09:10:00'), at('09:10:30'));
    await deployment(org, a, 'DEPLOYING', at('09:20:00'));
    await deployment(org, b, 'SUCCEEDED', at('09:30:00'), at('09:30:10'));

    // Another organization's rows in the same window are never counted.
    const other = await newTenant('dash-other');
    const c = await structure(other.organizationId);
    await run(other.organizationId, c, {
      status: 'ERROR',
      created: at('10:00:00'),
      started: at('10:00:00'),
      completed: at('10:05:00'),
      usage: [{ model: 'gpt-4o', usage: { input_tokens: 7, output_tokens: 7 } }],
    });
    await deployment(other.organizationId, c, 'QUEUED', at('10:00:00'));
  });

  it('computes every gauge of the organization over the window', async () => {
    const res = await as(t.key).get(`/api/dashboards/structures?${WINDOW}`);
    expect(res.status).to.equal(200);
    const d = res.body;
    expect(d.run_count_gauge).to.deep.equal({ active_count: 2, total_count: 7 });
    expect(d.error_rate_gauge).to.deep.equal({
      rate: 0.4,
      error_type_counts: [
        { count: 1, error_type: 'ERROR' },
        { count: 1, error_type: 'OutOfMemory' },
      ],
    });
    expect(d.run_duration_gauge).to.deep.equal({
      total_seconds: 100,
      activity_durations: [
        { activity_type: 'startup', seconds: 6 },
        { activity_type: 'execution', seconds: 100 },
      ],
    });
    expect(d.duration_plot).to.deep.equal({
      seconds_avg: 25,
      seconds_p50: 25,
      seconds_p100: 40,
      timeseries: [
        { time: '2026-01-01T10:00:00.000Z', seconds_p0: 10, seconds_p50: 20, seconds_p100: 30 },
        { time: '2026-01-01T11:00:00.000Z', seconds_p0: 20, seconds_p50: 20, seconds_p100: 20 },
        { time: '2026-01-01T12:00:00.000Z', seconds_p0: 40, seconds_p50: 40, seconds_p100: 40 },
      ],
    });
    expect(d.token_count_gauge).to.deep.equal({
      by_model: { 'gpt-4o': { input: 101, output: 22 }, claude: { input: 5, output: 1 } },
      input: 106,
      output: 23,
    });
    expect(d.deployment_count_gauge).to.deep.equal({ active_count: 1, total_count: 4 });
    expect(d.deployment_duration_gauge).to.deep.equal({ total_seconds: 100 });
    expect(d.deployment_error_rate_gauge.rate).to.be.closeTo(1 / 3, 1e-9);
  });

  it('buckets the duration plot by period', async () => {
    const res = await as(t.key).get(`/api/dashboards/structures?${WINDOW}&period=day`);
    expect(res.status).to.equal(200);
    expect(res.body.duration_plot.timeseries).to.deep.equal([
      { time: '2026-01-01T00:00:00.000Z', seconds_p0: 10, seconds_p50: 25, seconds_p100: 40 },
    ]);
  });

  it('filters by structure_ids, comma-separated or repeated', async () => {
    for (const q of [
      `structure_ids=${a}`,
      `structure_ids=${a},${randomUUID()}`,
      `structure_ids=${a}&structure_ids=${randomUUID()}`,
    ]) {
      const res = await as(t.key).get(`/api/dashboards/structures?${WINDOW}&${q}`);
      expect(res.status).to.equal(200);
      const d = res.body;
      expect(d.run_count_gauge).to.deep.equal({ active_count: 2, total_count: 6 });
      expect(d.error_rate_gauge.rate).to.equal(0.5);
      expect(d.duration_plot).to.include({ seconds_avg: 20, seconds_p50: 20, seconds_p100: 30 });
      expect(d.run_duration_gauge.total_seconds).to.equal(60);
      expect(d.token_count_gauge).to.deep.equal({
        by_model: { 'gpt-4o': { input: 100, output: 20 }, claude: { input: 5, output: 1 } },
        input: 105,
        output: 21,
      });
      expect(d.deployment_count_gauge).to.deep.equal({ active_count: 1, total_count: 3 });
      expect(d.deployment_duration_gauge.total_seconds).to.equal(90);
      expect(d.deployment_error_rate_gauge.rate).to.equal(0.5);
    }
    const b2 = await as(t.key).get(`/api/dashboards/structures?${WINDOW}&structure_ids=${b}`);
    expect(b2.body.run_count_gauge).to.deep.equal({ active_count: 0, total_count: 1 });
  });

  it('defaults to the last 24 hours: an empty tenant gets zeros', async () => {
    const fresh = await newTenant('dash-empty');
    const res = await as(fresh.key).get('/api/dashboards/structures');
    expect(res.status).to.equal(200);
    expect(res.body.run_count_gauge).to.deep.equal({ active_count: 0, total_count: 0 });
    expect(res.body.error_rate_gauge).to.deep.equal({ rate: 0, error_type_counts: [] });
    expect(res.body.duration_plot).to.deep.equal({ seconds_avg: 0, seconds_p50: 0, seconds_p100: 0, timeseries: [] });
    expect(res.body.token_count_gauge).to.deep.equal({ by_model: {}, input: 0, output: 0 });
    // The seeded tenant's rows are from 2026-01-01, not the last 24 hours of "now" (unless the clock says so).
    const seeded = await as(t.key).get('/api/dashboards/structures');
    expect(seeded.status).to.equal(200);
  });

  it('answers 400 ValidationError for bad parameters', async () => {
    for (const q of [
      'period=year',
      'start_time=yesterday',
      'end_time=2026-13-01T00:00:00Z',
      'structure_ids=not-a-uuid',
      `structure_ids=${randomUUID()},x`,
    ]) {
      const res = await as(t.key).get(`/api/dashboards/structures?${q}`);
      expect(res.status, q).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
    }
  });

  it('answers every well-formed window, an inverted or empty one and a wide one at a fine period included', async () => {
    const fresh = await newTenant();
    for (const q of [
      'start_time=2026-01-02T00:00:00Z&end_time=2026-01-01T00:00:00Z',
      'start_time=2026-01-01T00:00:00Z&end_time=2026-01-01T00:00:00Z',
      'start_time=2000-01-01T00:00:00Z&end_time=2026-01-01T00:00:00Z&period=minute',
    ]) {
      const res = await as(fresh.key).get(`/api/dashboards/structures?${q}`);
      expect(res.status, q).to.equal(200);
      expect(res.body.run_count_gauge, q).to.deep.equal({ active_count: 0, total_count: 0 });
      expect(res.body.duration_plot.timeseries, q).to.deep.equal([]);
    }
  });
});

/** A griptape 1.13.0 FinishPromptEvent as its GriptapeCloudEventListenerDriver posts it: `{payload, timestamp,
 * type}` with the event's to_dict() as the payload (counts are floats in Python, null when unreported). */
function finishPrompt(model: string, input: number | null, output: number | null) {
  const timestamp = 1767261600.25;
  const payload = { type: 'FinishPromptEvent', id: randomUUID().replace(/-/g, ''), timestamp, meta: {}, model };
  return {
    payload: { ...payload, result: 'Hi', input_token_count: input, output_token_count: output },
    timestamp,
    type: 'FinishPromptEvent',
  };
}

describe('structures dashboard: tokens from the events griptape structures send', () => {
  it("counts FinishPromptEvent's input_token_count and output_token_count beside the documented usage shape", async () => {
    const t = await newTenant('dash-griptape');
    const s = await structure(t.organizationId);
    const runId = await run(t.organizationId, s, {
      status: 'RUNNING',
      created: at('13:00:00'),
      started: at('13:00:01'),
    });
    const start = {
      payload: { type: 'StartPromptEvent', model: 'gpt-4o', prompt_stack: {} },
      timestamp: 1,
      type: 'StartPromptEvent',
    };
    // One batch, as the driver sends ten at a time; then one event alone.
    const batch = [
      start,
      finishPrompt('gpt-4o', 12.0, 3.0),
      finishPrompt('claude-3', null, null),
      finishPrompt('gpt-4o', 30, 7),
    ];
    expect((await as(t.key).post(`/api/structure-runs/${runId}/events`, batch)).status).to.equal(202);
    // A FinishPromptEvent counts its own members once, whatever else its payload carries.
    const both = finishPrompt('claude-3', 5, 2);
    Object.assign(both.payload, { usage: { input_tokens: 1000, output_tokens: 1000 } });
    expect((await as(t.key).post(`/api/structure-runs/${runId}/events`, both)).status).to.equal(202);
    // The documented shape still counts.
    const usage = {
      type: 'UserEvent',
      payload: { model: 'gpt-4o', usage: { input_tokens: 1, output_tokens: 1 } },
      timestamp: 2,
    };
    expect((await as(t.key).post(`/api/structure-runs/${runId}/events`, usage)).status).to.equal(202);

    const res = await as(t.key).get(`/api/dashboards/structures?${WINDOW}`);
    expect(res.status).to.equal(200);
    expect(res.body.token_count_gauge).to.deep.equal({
      by_model: { 'gpt-4o': { input: 43, output: 11 }, 'claude-3': { input: 5, output: 2 } },
      input: 48,
      output: 13,
    });
  });
});

// Spans of structure runs: the observability driver's batches (a JSON list, 200), listed by start time,
// scoped to the run's organization and credential, bounded per run.
import { expect } from 'chai';
import { createApiKey } from '../../src/services/accounts/accounts';
import { MAX_SPANS_PER_REQUEST, MAX_SPANS_PER_RUN } from '../../src/services/code/runs/spans';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { waitForRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';

/** A span as GriptapeCloudObservabilityDriver posts it. */
const span = (name: string, start: string, extra: Record<string, unknown> = {}) => ({
  trace_id: '00000000-0000-0000-1f2e-3d4c5b6a7988',
  span_id: `00000000-0000-0000-0000-${name.padStart(12, '0').slice(-12)}`,
  parent_id: null,
  name,
  start_time: start,
  end_time: '2026-01-01T00:00:09.000000Z',
  status: 'OK',
  attributes: { 'griptape.kind': 'test' },
  events: [{ name: 'note', timestamp: start, attributes: {} }],
  ...extra,
});

async function finishedRun(key: string, organizationId: string) {
  const s = await structureWithBuild(organizationId, { files: { 'structure.py': 'print("done")\n' } });
  const created = await as(key).post(`/api/structures/${s.structureId}/runs`, { args: [] });
  return (await waitForRun(key, created.body.structure_run_id)).structure_run_id as string;
}

describe('structure run spans', function () {
  this.timeout(60_000);

  it("stores the driver's batches (also of an ended run) and lists them by start time, paged", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const runId = await finishedRun(t.key, t.organizationId);
    const path = `/api/structure-runs/${runId}/spans`;

    const later = span('b', '2026-01-01T00:00:02.000001Z', { parent_id: '00000000-0000-0000-0000-00000000000a' });
    const first = await api.post(path, [later, span('c', '2026-01-01T00:00:03Z')]);
    expect(first.status, first.text).to.equal(200);
    expect(first.body).to.deep.equal({ count: 2, total_count: 2 });
    // Missing optional members get their defaults; an offset time zone is kept as sent.
    const bare = { trace_id: 't', span_id: 'a', name: 'a', start_time: '2026-01-01T01:00:01+01:00' };
    expect((await api.post(path, [bare])).body).to.deep.equal({ count: 1, total_count: 3 });

    const listed = await api.get(path);
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.body.spans).to.deep.equal([
      { ...bare, end_time: null, status: 'UNSET', attributes: {}, events: [] },
      later,
      span('c', '2026-01-01T00:00:03Z'),
    ]);
    expect(listed.body.pagination).to.include({ total_count: 3, page_number: 1 });
    const second = await api.get(`${path}?page=2&page_size=2`);
    expect(second.body.spans.map((s: any) => s.name)).to.deep.equal(['c']);
    expect((await api.post(path, [])).body).to.deep.equal({ count: 0, total_count: 3 });
  });

  it("refuses bodies that are not a list of spans, foreign runs and other runs' credentials", async () => {
    const t = await newTenant();
    const api = as(t.key);
    const runId = await finishedRun(t.key, t.organizationId);
    const path = `/api/structure-runs/${runId}/spans`;
    for (const bad of [
      span('a', 'now'),
      [{ ...span('a', '2026-01-01T00:00:00Z'), trace_id: undefined }],
      [{ ...span('a', '2026-01-01T00:00:00Z'), status: 'FINE' }],
      [span('a', '2026-01-01T00:00:00Z', { name: 'x\u0000y' })],
      // A date-time of the schema that PostgreSQL cannot hold (the schema fuzzer's 500).
      [span('a', '0000-01-01T00:00:00Z')],
    ]) {
      const res = await api.post(path, bad);
      expect(res.status, JSON.stringify(bad)).to.equal(400);
      expect(res.body.type).to.equal('ValidationError');
    }
    expect((await api.post(path, undefined)).status).to.equal(400);

    const other = await newTenant();
    expect((await as(other.key).get(path)).status).to.equal(404);
    expect((await as(other.key).post(path, [span('a', '2026-01-01T00:00:00Z')])).status).to.equal(404);

    const otherRun = await finishedRun(t.key, t.organizationId);
    const { value } = await createApiKey(getStack().ds, {
      organizationId: t.organizationId,
      userId: null,
      name: 'run key',
      createdBy: 'test',
      runId,
    });
    expect((await as(value).post(path, [span('a', '2026-01-01T00:00:00Z')])).status).to.equal(200);
    expect((await as(value).get(path)).body.spans).to.have.length(1);
    expect((await as(value).post(`/api/structure-runs/${otherRun}/spans`, [])).status).to.equal(403);
    expect((await api.get(`/api/structure-runs/${otherRun}/spans`)).body.spans).to.deep.equal([]);
  });

  it(`keeps at most ${MAX_SPANS_PER_RUN} spans per run: a batch past it is refused whole with 413`, async () => {
    const t = await newTenant();
    const api = as(t.key);
    const runId = await finishedRun(t.key, t.organizationId);
    const path = `/api/structure-runs/${runId}/spans`;
    const batch = Array.from({ length: MAX_SPANS_PER_REQUEST }, (_, i) =>
      span(String(i), '2026-01-01T00:00:00Z', { events: [] }),
    );
    expect((await api.post(path, [...batch, batch[0]])).status).to.equal(400);
    for (let n = MAX_SPANS_PER_REQUEST; n <= MAX_SPANS_PER_RUN; n += MAX_SPANS_PER_REQUEST) {
      expect((await api.post(path, batch)).body.total_count).to.equal(n);
    }
    const refused = await api.post(path, [batch[0]]);
    expect(refused.status, refused.text).to.equal(413);
    expect(refused.body.type).to.equal('PayloadTooLargeError');
    expect((await api.get(`${path}?page_size=1`)).body.pagination.total_count).to.equal(MAX_SPANS_PER_RUN);
  });
});

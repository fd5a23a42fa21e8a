// SSE_MAX_STREAMS_PER_ORG: an organization holds at most that many open event streams on one api process (a
// run's events and the run-changes stream count alike); past it a new stream answers 429 with Retry-After,
// other organizations are not affected, and a place comes back when a stream ends. SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG:
// of those, at most that many run-changes streams, the same way.
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities/run';
import { structureWithoutBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { configWith, getStack, newTenant, startApi } from '../harness/stack';

type Api = Awaited<ReturnType<typeof startApi>>;
/** The streams opened, ended after each group of tests. */
const open: AbortController[] = [];
const closeAll = () => open.splice(0).forEach((a) => a.abort());

/** Opens `path` on `api` as a stream with `key`; the answer's status, and the abort that ends it when it is a stream. */
async function openOn(api: Api, key: string, path: string) {
  const abort = new AbortController();
  const res = await fetch(`${api.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${key}` },
    signal: abort.signal,
  });
  if (res.status === 200) open.push(abort);
  return { res, close: () => abort.abort() };
}

/** Expects `refused` to be the 429 of a full cap named `variable`. */
async function expectRefused(refused: Response, variable: string) {
  expect(refused.status).to.equal(429);
  expect(refused.headers.get('retry-after')).to.equal('5');
  const body = (await refused.json()) as { type: string; errors: Array<{ message: string }> };
  expect(body.type).to.equal('TooManyRequestsError');
  expect(body.errors[0].message).to.contain(variable);
}

/** A structure run (never started) of the organization, for its event stream. */
async function aStructureRun(organizationId: string): Promise<string> {
  const run = aRun({
    kind: 'structure',
    organization_id: organizationId,
    resource_id: await structureWithoutBuild(organizationId),
  });
  await getStack().ds.getRepository(Run).save(run);
  return run.run_id;
}

describe('SSE_MAX_STREAMS_PER_ORG', function () {
  this.timeout(60_000);
  let api: Api;

  before(async () => {
    api = await startApi(getStack().env.client, 0, configWith({ SSE_MAX_STREAMS_PER_ORG: '2' }));
  });
  after(async () => {
    closeAll();
    await api?.close();
  });

  const stream = (key: string, path: string) => openOn(api, key, path);

  it('refuses a stream past the cap with 429 and Retry-After, for that organization only, until one ends', async () => {
    const tenant = await newTenant('sse-cap');
    const other = await newTenant('sse-cap-other');
    const runId = await aStructureRun(tenant.organizationId);

    const first = await stream(tenant.key, '/api/runs/stream');
    const second = await stream(tenant.key, `/api/structure-runs/${runId}/events/stream`);
    expect([first.res.status, second.res.status]).to.deep.equal([200, 200]);

    await expectRefused((await stream(tenant.key, '/api/runs/stream')).res, 'SSE_MAX_STREAMS_PER_ORG');

    expect((await stream(other.key, '/api/runs/stream')).res.status, 'another organization').to.equal(200);

    first.close();
    // The server sees the client go when its socket closes: the place comes back then.
    const deadline = Date.now() + 5_000;
    let again = await stream(tenant.key, '/api/runs/stream');
    while (again.res.status === 429 && Date.now() < deadline) {
      await again.res.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
      again = await stream(tenant.key, '/api/runs/stream');
    }
    expect(again.res.status).to.equal(200);
  });
});

describe('SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG', function () {
  this.timeout(60_000);
  let api: Api;

  before(async () => {
    api = await startApi(
      getStack().env.client,
      0,
      configWith({ SSE_MAX_STREAMS_PER_ORG: '3', SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG: '1' }),
    );
  });
  after(async () => {
    closeAll();
    await api?.close();
  });

  it('refuses a run-changes stream past its own cap with 429 and Retry-After; run event streams still open', async () => {
    const tenant = await newTenant('run-changes-cap');
    const other = await newTenant('run-changes-cap-other');
    const runId = await aStructureRun(tenant.organizationId);

    const first = await openOn(api, tenant.key, '/api/runs/stream');
    expect(first.res.status).to.equal(200);
    await expectRefused((await openOn(api, tenant.key, '/api/runs/stream')).res, 'SSE_MAX_RUN_CHANGE_STREAMS_PER_ORG');
    // The refused stream took no place: both others of the cap on all streams are still free.
    for (let i = 0; i < 2; i++)
      expect((await openOn(api, tenant.key, `/api/structure-runs/${runId}/events/stream`)).res.status).to.equal(200);
    await expectRefused(
      (await openOn(api, tenant.key, `/api/structure-runs/${runId}/events/stream`)).res,
      'SSE_MAX_STREAMS_PER_ORG',
    );
    expect((await openOn(api, other.key, '/api/runs/stream')).res.status, 'another organization').to.equal(200);

    first.close();
    const deadline = Date.now() + 5_000;
    let again = await openOn(api, tenant.key, '/api/runs/stream');
    while (again.res.status === 429 && Date.now() < deadline) {
      await again.res.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
      again = await openOn(api, tenant.key, '/api/runs/stream');
    }
    expect(again.res.status).to.equal(200);
  });
});

// SSE_MAX_STREAMS_PER_ORG: an organization holds at most that many open event streams on one api process (a
// run's events and the run-changes stream count alike); past it a new stream answers 429 with Retry-After,
// other organizations are not affected, and a place comes back when a stream ends.
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities/run';
import { structureWithoutBuild } from '../harness/builds';
import { aRun } from '../harness/runs';
import { configWith, getStack, newTenant, startApi } from '../harness/stack';

describe('SSE_MAX_STREAMS_PER_ORG', function () {
  this.timeout(60_000);
  let api: Awaited<ReturnType<typeof startApi>>;
  const open: AbortController[] = [];

  before(async () => {
    api = await startApi(getStack().env.client, 0, configWith({ SSE_MAX_STREAMS_PER_ORG: '2' }));
  });
  after(async () => {
    for (const a of open) a.abort();
    await api?.close();
  });

  /** Opens `path` as a stream with `key`; the answer's status, and the abort that ends it when it is a stream. */
  async function stream(key: string, path: string) {
    const abort = new AbortController();
    const res = await fetch(`${api.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: abort.signal,
    });
    if (res.status === 200) open.push(abort);
    return { res, close: () => abort.abort() };
  }

  it('refuses a stream past the cap with 429 and Retry-After, for that organization only, until one ends', async () => {
    const tenant = await newTenant('sse-cap');
    const other = await newTenant('sse-cap-other');
    const run = aRun({
      kind: 'structure',
      organization_id: tenant.organizationId,
      resource_id: await structureWithoutBuild(tenant.organizationId),
    });
    await getStack().ds.getRepository(Run).save(run);

    const first = await stream(tenant.key, '/api/runs/stream');
    const second = await stream(tenant.key, `/api/structure-runs/${run.run_id}/events/stream`);
    expect([first.res.status, second.res.status]).to.deep.equal([200, 200]);

    const refused = await stream(tenant.key, '/api/runs/stream');
    expect(refused.res.status).to.equal(429);
    expect(refused.res.headers.get('retry-after')).to.equal('5');
    const body = (await refused.res.json()) as { type: string; errors: Array<{ message: string }> };
    expect(body.type).to.equal('TooManyRequestsError');
    expect(body.errors[0].message).to.contain('SSE_MAX_STREAMS_PER_ORG');

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

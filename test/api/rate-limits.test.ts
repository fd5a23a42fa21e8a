// Rate limits (RATE_LIMITS, docs/run-control.md#rate-limits): token buckets per API key, per organization, for
// requests that create work, and per run credential, kept in PostgreSQL. Each test starts its own api with its
// own rules on the stack's database; the stack's api runs without limits.
import { expect } from 'chai';
import { Run } from '../../src/persistence/entities';
import { parseRateLimits, type RateLimitRules } from '../../src/security/rate-limit-rules';
import { createApiKey } from '../../src/services/accounts/accounts';
import { as, type Reply } from '../support/client';
import { aRun } from '../support/runs';
import { getStack, newTenant, startApi } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function apiWith(rules: string) {
  const stack = getStack();
  const problems: string[] = [];
  const rateLimits = parseRateLimits(rules, problems);
  expect(problems).to.deep.equal([]);
  return startApi(stack.env.client, 0, { ...stack.config, rateLimits });
}

const headersOf = (r: Reply) => ({
  limit: r.headers.get('ratelimit-limit'),
  remaining: r.headers.get('ratelimit-remaining'),
  reset: r.headers.get('ratelimit-reset'),
});

async function secondKey(organizationId: string, userId: string) {
  return (await createApiKey(getStack().ds, { organizationId, userId, name: 'second', createdBy: userId })).value;
}

describe('rate limits', function () {
  this.timeout(60_000);

  it('are off unless RATE_LIMITS says otherwise: no RateLimit headers', async () => {
    const t = await newTenant();
    const r = await as(t.key).get('/api/structures');
    expect(r.status).to.equal(200);
    expect(r.headers.get('ratelimit-limit')).to.equal(null);
  });

  it("count each key's requests, answer 429 with Retry-After past them, and a refusal spends nothing of the organization's bucket", async () => {
    const api = await apiWith('key=5/h,organization=8/h,create=off,run=off');
    try {
      const t = await newTenant();
      const a = as(t.key, api.baseUrl);
      const seen = [];
      for (let i = 0; i < 5; i++) {
        const r = await a.get('/api/structures');
        expect(r.status).to.equal(200);
        seen.push(headersOf(r));
      }
      // The tightest bucket is the key's (5 of 5 → 0 left), then the organization's would be 3.
      expect(seen.map((h) => h.remaining)).to.deep.equal(['4', '3', '2', '1', '0']);
      expect(seen[0].limit).to.equal('5');
      expect(Number(seen[4].reset)).to.be.within(3500, 3600);
      for (let i = 0; i < 10; i++) {
        const refused = await a.get('/api/structures');
        expect(refused.status).to.equal(429);
        expect(refused.body.type).to.equal('TooManyRequestsError');
        expect(refused.body.errors[0].message).to.match(/Rate limit of the API key exceeded/);
        expect(Number(refused.headers.get('retry-after'))).to.be.within(700, 721);
        expect(headersOf(refused).remaining).to.equal('0');
      }
      // Another key of the organization: its own bucket, and the organization's 3 tokens, which the
      // refusals above did not spend.
      const b = as(await secondKey(t.organizationId, t.userId), api.baseUrl);
      for (let i = 0; i < 3; i++) expect((await b.get('/api/structures')).status).to.equal(200);
      const byOrganization = await b.get('/api/structures');
      expect(byOrganization.status).to.equal(429);
      expect(byOrganization.body.errors[0].message).to.match(/Rate limit of the organization exceeded/);
      // Another organization is not affected.
      const other = await newTenant();
      expect((await as(other.key, api.baseUrl).get('/api/structures')).status).to.equal(200);
    } finally {
      await api.close();
    }
  });

  it('refill over time: a refused key is served again after Retry-After', async () => {
    const api = await apiWith('key=2/2s,organization=off,create=off,run=off');
    try {
      const t = await newTenant();
      const a = as(t.key, api.baseUrl);
      expect((await a.get('/api/structures')).status).to.equal(200);
      expect((await a.get('/api/structures')).status).to.equal(200);
      const refused = await a.get('/api/structures');
      expect(refused.status).to.equal(429);
      const wait = Number(refused.headers.get('retry-after'));
      expect(wait).to.equal(1);
      await sleep(wait * 1000 + 50);
      expect((await a.get('/api/structures')).status).to.equal(200);
    } finally {
      await api.close();
    }
  });

  it('take exactly the bucket from 30 concurrent requests through two api processes', async () => {
    const one = await apiWith('key=12/h,organization=off,create=off,run=off');
    const two = await apiWith('key=12/h,organization=off,create=off,run=off');
    try {
      const t = await newTenant();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => as(t.key, (i % 2 ? one : two).baseUrl).get('/api/structures')),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(12);
      expect(statuses.filter((s) => s === 429)).to.have.length(18);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('give requests that create work a smaller bucket of their own; a refused create makes nothing', async () => {
    const api = await apiWith('key=100/h,organization=off,create=2/h,run=off');
    try {
      const t = await newTenant();
      const a = as(t.key, api.baseUrl);
      // A structure starts a deployment: it creates work.
      for (const name of ['one', 'two']) {
        const made = await a.post('/api/structures', { name });
        expect(made.status, made.text).to.equal(201);
      }
      const refused = await a.post('/api/structures', { name: 'three' });
      expect(refused.status).to.equal(429);
      expect(refused.body.errors[0].message).to.match(/requests that create work/);
      const structures = (await a.get('/api/structures')).body.structures as Array<{ name: string }>;
      expect(structures.map((b) => b.name).sort()).to.deep.equal(['one', 'two']);
      // Reads still pass: they take from the key's bucket only.
      expect((await a.get('/api/structures')).status).to.equal(200);
    } finally {
      await api.close();
    }
  });

  it("give a run's credential its own bucket: it is served while its organization's is empty", async () => {
    const api = await apiWith('key=off,organization=2/h,create=off,run=3/h');
    try {
      const t = await newTenant();
      const { ds } = getStack();
      const structureId = (await as(t.key).post('/api/structures', { name: 'limited' })).body.structure_id;
      const run = await ds
        .getRepository(Run)
        .save(
          aRun({ kind: 'structure', organization_id: t.organizationId, resource_id: structureId, status: 'RUNNING' }),
        );
      const credential = (
        await createApiKey(ds, {
          organizationId: t.organizationId,
          userId: null,
          name: 'run',
          createdBy: 'test',
          runId: run.run_id,
        })
      ).value;
      const a = as(t.key, api.baseUrl);
      expect((await a.get('/api/structures')).status).to.equal(200);
      expect((await a.get('/api/structures')).status).to.equal(200);
      expect((await a.get('/api/structures')).status).to.equal(429);
      const byRun = as(credential, api.baseUrl);
      const events = `/api/structure-runs/${run.run_id}/events`;
      for (let i = 0; i < 3; i++) {
        const r = await byRun.get(events);
        expect(r.status, r.text).to.equal(200);
        expect(headersOf(r).limit).to.equal('3');
      }
      const refused = await byRun.get(events);
      expect(refused.status).to.equal(429);
      expect(refused.body.errors[0].message).to.match(/run's credential/);
    } finally {
      await api.close();
    }
  });

  it('read RATE_LIMITS: on, off, single buckets over the defaults, and name what is wrong', () => {
    const problems: string[] = [];
    expect(parseRateLimits(undefined, problems)).to.equal(undefined);
    expect(parseRateLimits(' off ', problems)).to.equal(undefined);
    const on = parseRateLimits('on', problems)!;
    expect(Object.keys(on).sort()).to.deep.equal(['create', 'key', 'organization', 'run']);
    const some: RateLimitRules = parseRateLimits('key=100/10s, create=off,run=60/m', problems)!;
    expect(some.key).to.deep.equal({ capacity: 100, perSecond: 10 });
    expect(some.run).to.deep.equal({ capacity: 60, perSecond: 1 });
    expect(some.create).to.equal(undefined);
    expect(some.organization).to.deep.equal(on.organization);
    expect(problems).to.deep.equal([]);
    parseRateLimits('keys=1/s,key=0/s,key=10', problems);
    expect(problems).to.have.length(3);
    expect(problems.every((p) => p.startsWith('RATE_LIMITS: '))).to.equal(true);
  });
});

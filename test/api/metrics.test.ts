// GET /metrics of the api: Prometheus text from this process's registry, requests counted by route template,
// every kind of job counted when created and when ended, and METRICS_TOKEN enforced when set.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startQueueMetrics } from '../../src/jobs/metric';
import { createApp } from '../../src/api/app';
import { FsBlobStore } from '../../src/blobs/fs-blob-store';
import { createLogger } from '../../src/logger';
import { as } from '../harness/client';
import { quietCodehostApp } from '../support/deliveries';
import { getStack, newTenant } from '../harness/stack';

/** The value of one series in Prometheus text, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf('}'));
    const have = inside.split(',');
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(line.split(' ').pop());
  }
  return 0;
}

describe('GET /metrics', () => {
  it('answers Prometheus text in which a request to a route is counted under its template', async () => {
    const t = await newTenant('metrics');
    const scrape = async () => {
      const res = await fetch(`${getStack().baseUrl}/metrics`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      return res.text();
    };
    const series = { method: 'GET', route: '/api/structures/:structure_id', status: '404' };
    const before = sample(await scrape(), 'tarmac_http_requests_total', series);
    const missing = await as(t.key).get(`/api/structures/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`);
    expect(missing.status).to.equal(404);
    const text = await scrape();
    expect(sample(text, 'tarmac_http_requests_total', series)).to.equal(before + 1);
    // The raw path never becomes a label; the latency histogram has the same labels.
    expect(text).not.to.include('route="/api/structures/00000000');
    expect(sample(text, 'tarmac_http_request_duration_seconds_count', series)).to.equal(before + 1);
    expect(text).to.include('# TYPE tarmac_sse_connections gauge');
    expect(text).to.include('# TYPE tarmac_jobs_created_total counter');
    // Not an API operation: not in the OpenAPI document.
    const doc = (await as(undefined).get('/api/openapi.json')).body;
    expect(Object.keys(doc.paths).some((p) => p.includes('metrics'))).to.equal(false);
  });

  it('reports the admission queue from PostgreSQL: jobs holding a slot and waiting for one (what KEDA scales on)', async () => {
    const { ds, baseUrl } = getStack();
    startQueueMetrics(ds);
    const t = await newTenant('queue-metric');
    const scrape = async () => {
      const text = await (await fetch(`${baseUrl}/metrics`)).text();
      return {
        holding: sample(text, 'tarmac_execution_slots', { state: 'holding' }),
        waiting: sample(text, 'tarmac_execution_slots', { state: 'waiting' }),
      };
    };
    const before = await scrape();
    // Two jobs waiting (asked by their workflows) and one holding its slot, as admission writes them.
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await ds.query(
      `INSERT INTO execution_slots (job_kind, job_id, organization_id, workflow_id, state, granted_at)
       VALUES ('runs', $1, $4, 'w1', 'WAITING', NULL), ('runs', $2, $4, 'w2', 'WAITING', NULL),
              ('runs', $3, $4, 'w3', 'HOLDING', now())`,
      [...ids, t.organizationId],
    );
    try {
      const during = await scrape();
      expect(during.waiting - before.waiting).to.equal(2);
      expect(during.holding - before.holding).to.equal(1);
    } finally {
      await ds.query(`DELETE FROM execution_slots WHERE job_id = ANY($1::uuid[])`, [ids]);
    }
  });

  it('counts an integration delivery as created and, once its work ended, as ended (every kind of job)', async function () {
    this.timeout(120_000);
    const t = await newTenant('metrics-delivery');
    const app = await quietCodehostApp(t.key);
    const scrape = async () => (await fetch(`${getStack().baseUrl}/metrics`)).text();
    const created = { kind: 'integration-delivery' };
    const ended = { kind: 'integration-delivery', status: 'SUCCEEDED' };
    const before = await scrape();
    const sent = await app.send();
    expect(sent.status, sent.text).to.equal(200);
    expect((await app.ended(sent.body.delivery_id)).status).to.equal('SUCCEEDED');
    // The worker of the test stack records into this process's registry too.
    const after = await scrape();
    expect(sample(after, 'tarmac_jobs_created_total', created)).to.equal(
      sample(before, 'tarmac_jobs_created_total', created) + 1,
    );
    expect(sample(after, 'tarmac_jobs_ended_total', ended)).to.equal(
      sample(before, 'tarmac_jobs_ended_total', ended) + 1,
    );
  });

  describe('with METRICS_TOKEN', () => {
    let server: http.Server;
    let baseUrl: string;
    before(async () => {
      const s = getStack();
      const app = createApp({
        config: { ...s.config, metrics: { ...s.config.metrics, token: 'scrape-secret' } },
        ds: s.ds,
        temporal: s.env.client,
        blobs: new FsBlobStore(s.config.blobDir),
        box: s.box,
        log: createLogger('silent', 'test-metrics-api'),
      });
      server = http.createServer(app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('refuses a scrape without the token or with another one, and answers one with it', async () => {
      const refused: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: 'scrape-secret' },
      ];
      for (const headers of refused) {
        const res = await fetch(`${baseUrl}/metrics`, { headers });
        expect(res.status).to.equal(401);
        expect(((await res.json()) as { type: string }).type).to.equal('UnauthorizedError');
      }
      const res = await fetch(`${baseUrl}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('# TYPE tarmac_http_requests_total counter');
    });
  });
});

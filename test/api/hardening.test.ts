// What a careless or hostile client may send, answered as the OpenAPI document says (issue 18): bounded
// numeric query parameters, the input guard (depth, NUL, unpaired surrogates) before any recursive walk,
// 405 with Allow for undeclared methods, SSE frames that match their declared schema, signed URL expiries.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { allRoutes, koaPath } from '../../src/api/http/route';
import { MAX_PAGE } from '../../src/api/http/pagination';
import { presignAssetUrl } from '../../src/services/buckets';
import { structureWithBuild } from '../support/builds';
import { as, request } from '../support/client';
import { ECHO_PROGRAM, waitForRun } from '../support/runs';
import { readSse, SseFrame } from '../support/sse';
import { getStack, newTenant } from '../support/stack';

/** A path of the route with every parameter a fresh uuid (or a plain asset name). */
const pathOf = (path: string) => `/api${path.replace(/\{(\w+)\}/g, (_, name) => (name === 'name' || name === 'activity_name' ? 'a.txt' : randomUUID()))}`;

async function documentAjv() {
  const doc = (await request('GET', '/api/openapi.json')).body;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: doc.components });
  const compile = (schema: unknown) => ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')));
  return { doc, compile };
}

describe('hardening: the document is true for careless and hostile input', function () {
  this.timeout(120_000);

  it('bounds every numeric query parameter in the document, and checks page before any SQL on every paginated list', async () => {
    const { doc } = await documentAjv();
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        for (const p of op.parameters.filter((x: any) => x.in === 'query' && ['integer', 'number'].includes(x.schema.type))) {
          expect(p.schema, `${method} ${path} ?${p.name}`).to.include.keys('minimum', 'maximum');
        }
      }
    }
    const t = await newTenant();
    const api = as(t.key);
    const paged = allRoutes().filter((r) => r.paged && r.method === 'get');
    expect(paged.length).to.be.greaterThan(15);
    for (const r of paged) {
      const path = pathOf(r.path);
      for (const page of ['7643178755367697857380352', String(MAX_PAGE + 1), '1e3', '0x10', 'Infinity', ' 2']) {
        const res = await api.get(`${path}?page=${encodeURIComponent(page)}`);
        expect(res.status, `${r.operationId} page=${page}: ${res.text}`).to.equal(400);
        expect(res.body.errors[0].path).to.equal('/query/page');
      }
      const last = await api.get(`${path}?page=${MAX_PAGE}&page_size=${r.pageSize?.max ?? getStack().config.pageSizeMax}`);
      expect(last.status, `${r.operationId} ${koaPath(r)}: ${last.text}`).to.be.oneOf([200, 404]);
    }
    const list = await api.get(`/api/buckets?page=${MAX_PAGE}`);
    expect(list.body).to.deep.include({ buckets: [] });
    expect(list.body.pagination).to.deep.include({ page_number: MAX_PAGE, total_count: 0, previous_page: MAX_PAGE - 1 });
    expect((await api.get(`/api/structure-runs/${randomUUID()}/events?offset=1000000001`)).status).to.equal(400);
    expect((await api.get(`/api/structure-runs/${randomUUID()}/events/stream?last_event_id=1000000000000000`)).status).to.equal(400);
  });

});

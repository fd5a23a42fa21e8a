// The OpenAPI document (src/api/openapi.ts) is a contract with generated clients: a change to the route builder
// or the schema registry's types must not change a byte of it. test/fixtures/openapi.json is the document main
// produced before route bodies were typed; regenerate it only for a deliberate change of the API:
//   node -e "require('./dist/src/api/routes'); const d = require('./dist/src/api/openapi').buildOpenApi({ serverUrl: 'http://localhost:8080', maxPageSize: 100 }); require('fs').writeFileSync('test/fixtures/openapi.json', JSON.stringify(d, null, 2) + '\n')"
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import '../../../src/api/routes';
import { buildOpenApi } from '../../../src/api/openapi';
import { request } from '../../harness/client';
import { getStack } from '../../harness/stack';

const fixture = fs.readFileSync(path.resolve(__dirname, '../../../../test/fixtures/openapi.json'), 'utf8');

describe('the OpenAPI document', () => {
  it('is byte-identical to the committed snapshot', () => {
    const generated = JSON.stringify(buildOpenApi({ serverUrl: 'http://localhost:8080', maxPageSize: 100 }), null, 2);
    // Not chai's equal: a 650 kB diff would drown the report; the first differing line says enough.
    if (generated + '\n' !== fixture) {
      const lines = generated.split('\n');
      const at = lines.findIndex((line, i) => line !== fixture.split('\n')[i]);
      expect.fail(`the document differs from test/fixtures/openapi.json at line ${at + 1}: ${lines[at]}`);
    }
  });

  it('is served as the snapshot, with the stack’s own server url', async () => {
    const { config } = getStack();
    expect(config.pageSizeMax, 'the snapshot is of the default PAGE_SIZE_MAX').to.equal(100);
    const res = await request('GET', '/api/openapi.json');
    expect(res.status).to.equal(200);
    const expected = { ...JSON.parse(fixture), servers: [{ url: config.publicBaseUrl }] };
    // Koa serialises an object body with JSON.stringify; parsing keeps the members' order.
    expect(res.text === JSON.stringify(expected), 'the served document differs from the snapshot').to.equal(true);
  });
});

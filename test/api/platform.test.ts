import { expect } from 'chai';
import { allRoutes } from '../../src/api/http/route';
import { as, request } from '../support/client';
import { configWith, getStack, newTenant, startApi } from '../support/stack';

describe('platform endpoints', () => {
  it('answers /health and /ready (database and Temporal reachable, disk above its watermark)', async () => {
    const health = await request('GET', '/health');
    expect(health.status).to.equal(200);
    const ready = await request('GET', '/ready');
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.deep.equal({ database: 'ok', temporal: 'ok', disk: 'ok' });
  });

  it("serves GET /api/config from configuration, under the interface's keys and the client's provider-named keys", async () => {
    const t = await newTenant();
    const config = configWith({
      DATA_LAKE_OBJSTORE_BUCKET: 'lake',
      DATA_LAKE_OBJSTORE_REGION: 'eu-1',
      DATA_LAKE_OBJSTORE_URL: 'https://lake.example',
      DRIVE_DATA_CONNECTOR_CLIENT_ID: 'client',
    });
    const api = await startApi(getStack().env.client, 0, config);
    try {
      const res = await as(t.key, api.baseUrl).get('/api/config');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        data_lake_objstore_bucket: 'lake',
        data_lake_objstore_region: 'eu-1',
        data_lake_objstore_url: 'https://lake.example',
        drive_data_connector_client_id: 'client',
        data_lake_s3_bucket: 'lake',
        data_lake_s3_region: 'eu-1',
        data_lake_s3_url: 'https://lake.example',
        google_drive_data_connector_client_id: 'client',
      });
    } finally {
      await api.close();
    }
  });

  it('serves an OpenAPI 3.1 document covering every implemented operation, with resolvable refs', async () => {
    const res = await request('GET', '/api/openapi.json');
    expect(res.status).to.equal(200);
    const doc = res.body;
    expect(doc.openapi).to.equal('3.1.0');
    const ops: string[] = [];
    for (const methods of Object.values<any>(doc.paths))
      for (const op of Object.values<any>(methods)) ops.push(op.operationId);
    expect(new Set(ops).size).to.equal(ops.length);
    expect(ops.sort()).to.deep.equal(
      allRoutes()
        .map((r) => r.operationId)
        .sort(),
    );
    const foundation = [
      'ListUsers',
      'DeleteApiKey',
      'GetApiKey',
      'UpdateApiKey',
      'ListOrganizationApiKeys',
      'CreateOrganizationApiKey',
      'ListApiKeys',
      'CreateApiKey',
      'ListUserInvites',
      'GetInvite',
      'DeleteInvite',
      'RespondToInvite',
      'ListInvites',
      'CreateInvite',
      'GetConfig',
      'ListBuckets',
      'CreateBucket',
      'GetBucket',
      'UpdateBucket',
      'DeleteBucket',
      'CreateAssetUrl',
      'ListAssets',
      'CreateAsset',
      'GetAsset',
      'DeleteAsset',
    ];
    expect(ops).to.include.members(foundation);
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = ref.slice('"#/components/schemas/'.length, -1);
      expect(doc.components.schemas, `dangling ${ref}`).to.have.property(name);
    }
  });
});

// A codehost_app integration that runs nothing: each signed `issues` event it receives is a queued delivery
// (its own workflow, integration-delivery-<uuid>) whose work ends SUCCEEDED at once, for tests of the
// delivery's life as a job (its start, its metric) rather than of what it starts.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { as, request, type Reply } from '../harness/client';
import { signedCodehostDelivery } from '../harness/codehost-app-double';

const WEBHOOK_SECRET = 'quiet-app-secret';

export interface QuietApp {
  integrationId: string;
  /** Sends one event; answers the handler's reply (200 with `delivery_id` once the delivery is queued). */
  send(): Promise<Reply>;
  /** The delivery once its work ended (bounded). */
  ended(deliveryId: string): Promise<{ status: string; status_detail: unknown }>;
}

export async function quietCodehostApp(key: string): Promise<QuietApp> {
  const api = as(key);
  const secret = await api.post('/api/secrets', { name: `s-${randomUUID()}`, value: WEBHOOK_SECRET });
  expect(secret.status, secret.text).to.equal(201);
  const integration = await api.post('/api/integrations', {
    name: `quiet-${randomUUID().slice(0, 8)}`,
    type: 'codehost_app',
    config: { codehost_app: { app_id: '1', webhook_secret_ref: secret.body.secret_id } },
  });
  expect(integration.status, integration.text).to.equal(201);
  const integrationId: string = integration.body.integration_id;
  const handler = `/api/integrations/${integrationId}/handler`;
  return {
    integrationId,
    send: () => {
      const body = JSON.stringify({ action: 'opened', issue: { number: 1 } });
      return request('POST', handler, undefined, {
        raw: body,
        headers: signedCodehostDelivery(WEBHOOK_SECRET, body, 'issues'),
      });
    },
    async ended(deliveryId) {
      const deadline = Date.now() + 60_000; // a bound, not a measurement
      for (;;) {
        const res = await api.get(`/api/integrations/${integrationId}/deliveries?page_size=100`);
        expect(res.status, res.text).to.equal(200);
        const d = (res.body.deliveries as any[]).find((x) => x.delivery_id === deliveryId);
        if (d && ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(d.status)) return d;
        if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} is still ${d?.status}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

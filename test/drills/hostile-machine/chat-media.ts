// Chat message media aimed at the machine (issue 29): an ordinary organization sends images whose URLs name
// this host (its interface address, loopback, its name, the platform's api) and cloud metadata, hoping that a
// model provider on the operator's network fetches them; and a base64 image past the request body limit. The
// policy holds when every URL is a 400 pointing at it before anything is sent (the provider double gets no
// request, a listener on every address of the host gets no connection) and the oversized body is a 413.
import os from 'node:os';
import { as } from '../../harness/client';
import { hostInterfaceAddress, startHostWitness } from '../../harness/host-witness';
import { newTenant } from '../../harness/stack';
import type { MachineAttack } from './kit';

/** A model the stack's MODEL_IMAGE_INPUT (`local/compat-*`) names: the refusal is the address policy's, not the capability's. */
const VISION_MODEL = 'compat-media-drill';

const chatWith = (...content: unknown[]) => ({
  messages: [{ role: 'user', usage: { type: 'Usage', input_tokens: null, output_tokens: null }, content }],
  tools: [],
  driver_configuration: { model: `local/${VISION_MODEL}` },
});
const imageAt = (url: string) => ({ type: 'ImageMessageContent', artifact: { type: 'ImageUrlArtifact', value: url } });

const imageUrlsToSelf: MachineAttack = {
  name: 'chat-image-url-self',
  limit: 'outbound policy (OUTBOUND_ALLOW) on image and video URLs',
  async run(ctx) {
    const api = as((await newTenant('media-drill')).key);
    const witness = await startHostWitness();
    try {
      const port = witness.port;
      const urls = [
        `http://${hostInterfaceAddress()}:${port}/cat.png`,
        `http://127.0.0.1:${port}/cat.png`,
        `http://localhost:${port}/cat.png`,
        `http://[::1]:${port}/cat.png`,
        `http://${os.hostname()}:${port}/cat.png`,
        `${ctx.stack.baseUrl}/api/openapi.json`,
        'http://169.254.169.254/latest/meta-data/',
      ];
      const before = ctx.stack.modelProvider.requestsFor(VISION_MODEL).length;
      let refused = 0;
      for (const url of urls) {
        const res = await api.post('/api/chat/messages', chatWith(imageAt(url)));
        const error = res.body?.errors?.[0];
        if (res.status === 400 && error?.path === '/body/messages/0/content/0/artifact/value') refused++;
        else ctx.note(`image URL ${url}: ${res.status} ${res.text.slice(0, 200)}`);
      }
      const sent = ctx.stack.modelProvider.requestsFor(VISION_MODEL).length - before;
      const reached = witness.connections.length;
      return {
        held: refused === urls.length && sent === 0 && reached === 0,
        result: `${refused}/${urls.length} URLs refused (400), ${sent} provider requests, ${reached} connections reached the host`,
      };
    } finally {
      await witness.close();
    }
  },
};

const oversizedImage: MachineAttack = {
  name: 'chat-image-body-bomb',
  limit: 'MAX_JSON_BODY_BYTES=1048576',
  async run(ctx) {
    const api = as((await newTenant('media-drill')).key);
    const bytes = (ctx.quick ? 2 : 16) * 1024 * 1024;
    const value = Buffer.alloc(bytes, 1).toString('base64');
    const before = ctx.stack.modelProvider.requestsFor(VISION_MODEL).length;
    const started = Date.now();
    const res = await api.post(
      '/api/chat/messages',
      chatWith({ type: 'ImageMessageContent', artifact: { type: 'ImageArtifact', value, format: 'png' } }),
    );
    const sent = ctx.stack.modelProvider.requestsFor(VISION_MODEL).length - before;
    return {
      held: res.status === 413 && sent === 0,
      result: `a ${bytes / 1024 / 1024} MiB image: ${res.status} ${res.body?.type ?? ''} in ${Date.now() - started} ms, ${sent} provider requests`,
    };
  },
};

export const attacks: MachineAttack[] = [imageUrlsToSelf, oversizedImage];

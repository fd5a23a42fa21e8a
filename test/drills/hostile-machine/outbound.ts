// Outbound features aimed at the host itself (issue 23, items 9 and 10): an ordinary organization points a
// webscraper, an objstore endpoint and pg_vector knowledge bases at this host's own addresses (its interface
// address, loopback in several spellings, the platform's PostgreSQL and api) and at cloud metadata. A listener
// on every address of the host (0.0.0.0) counts the connections that reach it: the policy holds when that
// count stays 0, nothing is stored, and every pg_vector failure reads the same (no port scanner).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { OUTSIDE_UNREACHABLE } from '../../../src/services/knowledge/index/chunk-store';
import { as, request } from '../../harness/client';
import { hostInterfaceAddress, startHostWitness, type HostWitness } from '../../harness/host-witness';
import { newTenant, type Stack } from '../../harness/stack';
import type { MachineAttack, MachineAttackContext, MachineAttackResult } from './kit';

type Api = ReturnType<typeof as>;
const LIMIT = 'outbound policy (OUTBOUND_ALLOW)';

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, seconds = 30): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const ended = (status: string) => !['QUEUED', 'RUNNING'].includes(status);

/** Runs `attack` with a fresh tenant and a listener on every address of the host, closed afterwards. */
async function withWitness(
  ctx: MachineAttackContext,
  attack: (api: Api, witness: HostWitness, self: string) => Promise<MachineAttackResult>,
): Promise<MachineAttackResult> {
  const api = as((await newTenant('outbound-drill')).key);
  const witness = await startHostWitness();
  try {
    const r = await attack(api, witness, hostInterfaceAddress());
    const reached = witness.connections.length;
    if (reached) ctx.note(`connections reached the host's listener at: ${witness.connections.join(', ')}`);
    return { held: r.held && reached === 0, result: `${r.result}; ${reached} connections reached the host` };
  } finally {
    await witness.close();
  }
}

const apiPortOf = (stack: Stack) => new URL(stack.baseUrl).port;

const webscraperToSelf: MachineAttack = {
  name: 'outbound-webscraper-self',
  limit: LIMIT,
  run: (ctx) =>
    withWitness(ctx, async (api, witness, self) => {
      const urls = [
        `http://${self}:${witness.port}/`,
        `http://127.0.0.1:${witness.port}/`,
        `http://0.0.0.0:${witness.port}/`,
        `http://localhost:${witness.port}/`,
        `http://${os.hostname()}:${witness.port}/`, // the host's own name
        `http://127.0.0.1:${apiPortOf(ctx.stack)}/api/openapi.json`, // the platform's own api
        'http://169.254.169.254/latest/meta-data/',
      ];
      const created = await api.post('/api/data-connectors', {
        name: 'self',
        type: 'webscraper',
        config: { webscraper: { urls } },
      });
      if (created.status !== 201) return { held: false, result: `connector not created: ${created.text}` };
      const job = await until(
        async () => (await api.get(`/api/data-jobs/${created.body.data_job_id}`)).body,
        (j) => ended(j.status),
      );
      const refused = (job.errors ?? []).filter((e: { type: string }) => e.type === 'AddressRefused').length;
      return {
        held: refused === urls.length && Number(job.bytes_ingested ?? 0) === 0,
        result: `${refused}/${urls.length} URLs refused, ${job.bytes_ingested ?? '?'} bytes stored`,
      };
    }),
};

const objstoreToSelf: MachineAttack = {
  name: 'outbound-objstore-self',
  limit: LIMIT,
  run: (ctx) =>
    withWitness(ctx, async (api, witness, self) => {
      const verdicts: string[] = [];
      for (const endpoint of [`http://${self}:${witness.port}`, `http://localhost:${witness.port}`]) {
        const created = await api.post('/api/data-connectors', {
          name: 'self s3',
          type: 'objstore',
          config: {
            objstore: {
              objstore_access_key_id: 'AKIAEXAMPLE',
              objstore_secret_access_key: 'secret',
              uris: ['s3://lake/docs/'],
              objstore_endpoint: endpoint,
              objstore_force_path_style: true,
            },
          },
        });
        if (created.status !== 201) return { held: false, result: `connector not created: ${created.text}` };
        const job = await until(
          async () => (await api.get(`/api/data-jobs/${created.body.data_job_id}`)).body,
          (j) => ended(j.status),
        );
        verdicts.push(
          job.status === 'FAILED' && JSON.stringify(job.status_detail).includes('AddressRefused')
            ? 'refused'
            : `${job.status}`,
        );
      }
      return { held: verdicts.every((v) => v === 'refused'), result: `endpoints: ${verdicts.join(', ')}` };
    }),
};

const pgVectorToSelf: MachineAttack = {
  name: 'outbound-pg-vector-self',
  limit: LIMIT,
  run: (ctx) =>
    withWitness(ctx, async (api, witness, self) => {
      const stackDb = new URL((ctx.stack.ds.options as { url: string }).url);
      const bucketId = (await api.post('/api/buckets', { name: 'kb-docs' })).body.bucket_id;
      await api.put(`/api/buckets/${bucketId}/assets`, { name: 'a/x.txt' });
      const put = await api.post(`/api/buckets/${bucketId}/asset-urls/a/x.txt`, { operation: 'PUT' });
      await request('PUT', put.body.url, undefined, { raw: 'some text' });
      const targets = [
        `postgres://${stackDb.username}@127.0.0.1:${stackDb.port}/postgres`, // the platform's own database
        `postgres://postgres@127.0.0.1:${witness.port}/postgres`,
        `postgres://postgres@${self}:${witness.port}/postgres`,
        `postgres://postgres@169.254.169.254:5432/postgres`,
      ];
      const messages = new Set<string>();
      let failed = 0;
      for (const connectionString of targets) {
        const kb = await api.post('/api/knowledge-bases', {
          name: `kb ${randomUUID().slice(0, 8)}`,
          type: 'pg_vector',
          config: { pg_vector: { connection_string: connectionString, password: 'guessed' } },
          asset_paths: [`${bucketId}/a/`],
        });
        if (kb.status !== 201) return { held: false, result: `knowledge base not created: ${kb.text}` };
        const started = await api.post(`/api/knowledge-bases/${kb.body.knowledge_base_id}/knowledge-base-jobs`);
        const job = await until(
          async () => (await api.get(`/api/knowledge-base-jobs/${started.body.knowledge_base_job_id}`)).body,
          (j) => ended(j.status),
        );
        if (job.status === 'FAILED') failed++;
        messages.add(String(job.status_detail?.message));
      }
      const generic = messages.size === 1 && [...messages][0] === OUTSIDE_UNREACHABLE;
      if (!generic) ctx.note(`pg_vector answers: ${[...messages].join(' || ')}`);
      return {
        held: failed === targets.length && generic,
        result: `${failed}/${targets.length} failed, ${messages.size} distinct message(s)`,
      };
    }),
};

export const attacks: MachineAttack[] = [webscraperToSelf, objstoreToSelf, pgVectorToSelf];

// Creates repeated with their Idempotency-Key, concurrently through two api processes, make one run per key:
// 1,000 creates carrying 100 distinct keys make exactly 100 runs (quick: 200 creates, 20 keys), every answer a
// 201 (the first of a key) or a 200 naming the same run.
import { Run } from '../../../src/persistence/entities';
import { structureWithBuild } from '../../harness/builds';
import { as } from '../../harness/client';
import { ECHO_PROGRAM } from '../../harness/runs';
import { newTenant, startApi } from '../../harness/stack';
import type { AdmissionCheck } from './kit';

export const checks: AdmissionCheck[] = [
  {
    name: 'idempotency',
    promise: 'N creates carrying K idempotency keys, through 2 apis: exactly K runs',
    async run({ stack, quick, note }) {
      const [sent, keys] = quick ? [200, 20] : [1000, 100];
      const apis = [await startApi(stack.env.client), await startApi(stack.env.client)];
      try {
        const t = await newTenant('idempotency');
        const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
        const started = Date.now();
        const answers = await Promise.all(
          Array.from({ length: sent }, (_, i) =>
            as(t.key, apis[i % 2].baseUrl).post(
              `/api/structures/${structureId}/runs`,
              { args: [`key-${i % keys}`] },
              { headers: { 'Idempotency-Key': `key-${i % keys}` } },
            ),
          ),
        );
        note(`${sent} creates answered in ${Date.now() - started} ms`);
        const created = answers.filter((r) => r.status === 201).length;
        const repeated = answers.filter((r) => r.status === 200).length;
        const other = answers.filter((r) => r.status !== 201 && r.status !== 200).map((r) => r.status);
        // Every answer of one key names the same run.
        const runOfKey = new Map<string, Set<string>>();
        answers.forEach((r, i) => {
          const ids = runOfKey.get(`key-${i % keys}`) ?? new Set<string>();
          if (r.body?.structure_run_id) ids.add(r.body.structure_run_id);
          runOfKey.set(`key-${i % keys}`, ids);
        });
        const oneRunPerKey = [...runOfKey.values()].every((ids) => ids.size === 1);
        const runs = await stack.ds.getRepository(Run).countBy({ resource_id: structureId });
        const held = runs === keys && created === keys && repeated === sent - keys && oneRunPerKey;
        return {
          held,
          faults: sent - keys,
          result:
            `${sent} concurrent creates with ${keys} keys through 2 apis: ${runs} runs stored, ${created} answered 201, ` +
            `${repeated} 200 (replayed)${oneRunPerKey ? '' : ', a key answered with two runs'}` +
            (other.length ? `, other answers ${other.join(',')}` : ''),
        };
      } finally {
        await Promise.all(apis.map((a) => a.close()));
      }
    },
  },
];

// A key over its bucket for creating work gets 429 with Retry-After, and no run: concurrent creates through an
// api with RATE_LIMITS on make exactly as many runs as the bucket holds.
import { Run } from '../../../src/persistence/entities';
import { parseRateLimits } from '../../../src/security/rate-limit-rules';
import { structureWithBuild } from '../../harness/builds';
import { as } from '../../harness/client';
import { ECHO_PROGRAM } from '../../harness/runs';
import { newTenant, startApi } from '../../harness/stack';
import type { AdmissionCheck } from './kit';

export const checks: AdmissionCheck[] = [
  {
    name: 'rate-limit',
    promise: 'a key past its create bucket: 429 with Retry-After, no run',
    async run({ stack, quick }) {
      const bucket = quick ? 5 : 20;
      const sent = bucket * 4;
      const problems: string[] = [];
      const rateLimits = parseRateLimits(`key=1000/h,organization=off,create=${bucket}/h,run=off`, problems);
      if (problems.length) throw new Error(problems.join('; '));
      const api = await startApi(stack.env.client, 0, { ...stack.config, rateLimits });
      try {
        const t = await newTenant('rate-limit');
        const { structureId } = await structureWithBuild(t.organizationId, { files: { 'structure.py': ECHO_PROGRAM } });
        const client = as(t.key, api.baseUrl);
        const answers = await Promise.all(
          Array.from({ length: sent }, () => client.post(`/api/structures/${structureId}/runs`, { args: [] })),
        );
        const made = answers.filter((r) => r.status === 201).length;
        const refused = answers.filter((r) => r.status === 429);
        const withRetryAfter = refused.filter((r) => Number(r.headers.get('retry-after')) > 0).length;
        const other = answers.filter((r) => r.status !== 201 && r.status !== 429).map((r) => r.status);
        const runs = await stack.ds.getRepository(Run).countBy({ resource_id: structureId });
        const held =
          made === bucket && refused.length === sent - bucket && withRetryAfter === refused.length && runs === bucket;
        return {
          held,
          faults: sent,
          result:
            `${sent} concurrent creates, bucket ${bucket}: ${made} made, ${refused.length} refused ` +
            `(${withRetryAfter} with Retry-After), ${runs} runs stored` +
            (other.length ? `, other answers ${other.join(',')}` : ''),
        };
      } finally {
        await api.close();
      }
    },
  },
];

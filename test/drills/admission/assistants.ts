// An assistant with `concurrency: {limit: 2}` receiving a burst of runs across several keys never has more than 2
// runs per key talking to the model at once, as the model (the provider double) sees them: each request's arrival
// and the end of its streamed answer, on the double's clock. Every run ends SUCCEEDED (no queued run lost), and
// each run asked the model exactly once. On the stack's own api and worker.
import { as } from '../../harness/client';
import { newTenant } from '../../harness/stack';
import { until } from '../kit';
import { peakOverlap } from './concurrency';
import type { AdmissionCheck } from './kit';

const LIMIT = 2;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];

export const checks: AdmissionCheck[] = [
  {
    name: 'assistant-concurrency',
    promise: `limit ${LIMIT} per concurrency key of an assistant, seen by the model; every run ends, asking once`,
    async run({ stack, quick, note }) {
      const runs = quick ? 24 : 120;
      const keys = quick ? 3 : 6;
      const provider = stack.modelProvider;
      const model = provider.uniqueModel('drill-assistant');
      /** Per run (its input names it): when its model request came and when its answer ended. */
      const seen = new Map<string, Array<{ start: number; end: number }>>();
      provider.script({
        model,
        times: Infinity,
        respond: (body) => {
          const input = String(body.messages.at(-1)?.content ?? '');
          const interval = { start: Date.now(), end: Number.POSITIVE_INFINITY };
          seen.set(input, [...(seen.get(input) ?? []), interval]);
          const request = provider.requestsFor(model).find((r) => r.body === body);
          void request?.ended.then(() => (interval.end = Date.now()));
          return { text: 'one two three four five six seven eight', chunkDelayMs: quick ? 40 : 25 };
        },
      });
      const t = await newTenant('drill-assistant');
      const client = as(t.key);
      const assistant = await client.post('/api/assistants', {
        name: 'Drill',
        concurrency: { limit: LIMIT },
      });
      if (assistant.status !== 201) throw new Error(`creating the assistant answered ${assistant.status}`);
      const keyOf = (i: number) => `customer-${i % keys}`;
      const inputOf = (i: number) => `run ${i} of ${keyOf(i)}`;
      const created = await Promise.all(
        Array.from({ length: runs }, async (_, i) => {
          const res = await client.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
            input: inputOf(i),
            stream: true,
            model: `local/${model}`,
            concurrency_key: keyOf(i),
          });
          if (res.status !== 201) throw new Error(`creating a run answered ${res.status} ${res.text}`);
          return res.body.assistant_run_id as string;
        }),
      );
      const rowsOf = async () =>
        (await stack.ds.query(`SELECT status FROM runs WHERE run_id = ANY($1::uuid[])`, [created])) as Array<{
          status: string;
        }>;
      const ended = async () => (await rowsOf()).filter((r) => TERMINAL.includes(r.status)).length;
      const lost = await until(
        'every assistant run to end',
        quick ? 120_000 : 300_000,
        async () => ((await ended()) === runs ? 0 : undefined),
        250,
      ).catch(async () => runs - (await ended()));
      const statuses = new Map<string, number>();
      for (const r of await rowsOf()) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      const byStatus = [...statuses.entries()].map(([st, n]) => `${n} ${st}`).join(', ');
      const perKey = new Map<string, Array<{ start: number; end: number }>>();
      for (let i = 0; i < runs; i++)
        perKey.set(keyOf(i), [...(perKey.get(keyOf(i)) ?? []), ...(seen.get(inputOf(i)) ?? [])]);
      const peaks = [...perKey.values()].map(peakOverlap);
      const peak = Math.max(0, ...peaks);
      const asks = [...seen.values()].map((v) => v.length);
      const askedOnce = asks.length === runs && asks.every((n) => n === 1);
      provider.withdraw(...provider.unused(model));
      note(`${runs} runs over ${keys} keys; peak talking to the model per key: ${peaks.join(',')}; ended: ${byStatus}`);
      return {
        held: peak <= LIMIT && peak > 0 && lost === 0 && askedOnce && statuses.get('SUCCEEDED') === runs,
        result:
          `${runs} assistant runs across ${keys} keys (limit ${LIMIT}): at most ${peak} per key at the model, ` +
          `${lost} not ended, ${askedOnce ? 'each asked once' : `asks per run ${asks.join(',')}`}; ${byStatus}`,
      };
    },
  },
];

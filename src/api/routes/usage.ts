// Usage of the key's organization per UTC day: run time, model tokens, bytes ingested, retrieval queries
// (src/services/accounts/usage.ts). A self-hosted platform has no quota: every `*_limit` is -1.
import { MAX_USAGE_DAYS, organizationUsage, usagePeriod } from '../../services/accounts/usage';
import { route } from '../http/route';
import { defineSchema, timestamp, uuid } from '../schemas/registry';

const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day, YYYY-MM-DD.' } as const;
const amount = { type: 'number' } as const;
const limit = { type: 'number', description: '-1: no limit (a self-hosted platform sets none).' } as const;

route({
  operationId: 'GetUsage',
  method: 'get',
  path: '/usage',
  tag: 'Usage',
  query: { start_date: date, end_date: date },
  summary: `The organization's usage per UTC day from start_date to end_date (both inclusive; default the current month; at most ${MAX_USAGE_DAYS} days): run time of every run (started to completed, or now while running), model tokens of assistant runs and chat exchanges, bytes ingested by knowledge base jobs, and knowledge base queries, searches and retriever queries.`,
  responses: {
    200: {
      description: 'Usage',
      schema: defineSchema('Usage', {
        type: 'object',
        required: [
          'usage_period_start',
          'usage_period_end',
          'runtime_seconds',
          'runtime_seconds_limit',
          'bytes_ingested',
          'bytes_ingested_limit',
          'rag_queries',
          'rag_queries_limit',
        ],
        properties: {
          organization_id: uuid,
          usage_period_start: timestamp,
          usage_period_end: { ...timestamp, description: 'Exclusive: the start of the day after end_date.' },
          runtime_seconds: amount,
          runtime_seconds_limit: limit,
          input_tokens: amount,
          output_tokens: amount,
          bytes_ingested: amount,
          bytes_ingested_limit: limit,
          rag_queries: amount,
          rag_queries_limit: limit,
          days: {
            type: 'array',
            items: {
              type: 'object',
              required: ['date', 'runtime_seconds', 'input_tokens', 'output_tokens', 'bytes_ingested', 'rag_queries'],
              properties: {
                date,
                runtime_seconds: amount,
                input_tokens: amount,
                output_tokens: amount,
                bytes_ingested: amount,
                rag_queries: amount,
              },
            },
          },
        },
      }),
    },
  },
  handler: async ({ deps, caller, query }) => ({
    status: 200,
    body: await organizationUsage(
      deps.ds,
      caller.organizationId,
      usagePeriod(new Date(), query.start_date, query.end_date),
    ),
  }),
});

// The offset-paginated event list shared by structure run and assistant run events: the `limit`/`offset`
// query, the six-field envelope, and reading one page of a run's events.
import type { DataSource } from 'typeorm';
import type { RunEvent } from '../../persistence/entities';
import { listRunEvents } from '../../services/code/runs/events';
import { defineSchema, JsonSchema } from '../schemas/registry';

const MAX_EVENT_LIMIT = 1000;
const DEFAULT_EVENT_LIMIT = 100;
/** Far more events than a run can hold (its output is bounded by RUN_LOG_LIMIT_BYTES and the time limit). */
const MAX_EVENT_OFFSET = 1_000_000_000;

export const EVENT_LIST_SUMMARY = `\`limit\` (default ${DEFAULT_EVENT_LIMIT}, at most ${MAX_EVENT_LIMIT}) and \`offset\` (at most ${MAX_EVENT_OFFSET}); continue with \`offset = next_offset\`.`;

export const eventListQuery = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_EVENT_LIMIT },
  offset: { type: 'integer', minimum: 0, maximum: MAX_EVENT_OFFSET },
};

/** `{events, count, total_count, limit, offset, next_offset}` of `event` items. */
export const eventListSchema = (name: string, event: JsonSchema) =>
  defineSchema(name, {
    type: 'object',
    required: ['events', 'count', 'total_count', 'limit', 'offset', 'next_offset'],
    properties: {
      events: { type: 'array', items: event },
      count: { type: 'number' },
      total_count: { type: 'number' },
      limit: { type: 'number' },
      offset: { type: 'number' },
      next_offset: { type: 'number', description: '`offset + count`.' },
    },
  });

export async function eventListPage(
  ds: DataSource,
  runId: string,
  query: { limit?: number; offset?: number },
  present: (e: RunEvent) => unknown,
) {
  const limit = query.limit ?? DEFAULT_EVENT_LIMIT;
  const offset = query.offset ?? 0;
  const { events, total } = await listRunEvents(ds, runId, limit, offset);
  return {
    events: events.map(present),
    count: events.length,
    total_count: total,
    limit,
    offset,
    next_offset: offset + events.length,
  };
}

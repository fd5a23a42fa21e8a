// Dashboards: aggregates over the caller's organization (see src/services/code/dashboard.ts for the definitions).
import { DASHBOARD_PERIODS, DashboardPeriod, structuresDashboard } from '../../services/code/dashboard';
import { route } from '../http/route';
import { defineSchema, timestamp, uuid } from '../schemas/registry';

const DEFAULT_WINDOW_MS = 24 * 3600_000;

const count = { type: 'integer', minimum: 0 };
const seconds = { type: 'number', minimum: 0 };

const StructuresDashboardSchema = defineSchema('StructuresDashboard', {
  type: 'object',
  properties: {
    deployment_count_gauge: {
      type: 'object',
      required: ['active_count', 'total_count'],
      properties: { active_count: count, total_count: count },
    },
    deployment_duration_gauge: { type: 'object', required: ['total_seconds'], properties: { total_seconds: seconds } },
    deployment_error_rate_gauge: { type: 'object', required: ['rate'], properties: { rate: { type: 'number' } } },
    duration_plot: {
      type: 'object',
      required: ['seconds_avg', 'seconds_p100', 'seconds_p50', 'timeseries'],
      properties: {
        seconds_avg: seconds,
        seconds_p100: seconds,
        seconds_p50: seconds,
        timeseries: {
          type: 'array',
          items: {
            type: 'object',
            required: ['seconds_p0', 'seconds_p100', 'seconds_p50', 'time'],
            properties: { seconds_p0: seconds, seconds_p100: seconds, seconds_p50: seconds, time: timestamp },
          },
        },
      },
    },
    error_rate_gauge: {
      type: 'object',
      required: ['error_type_counts', 'rate'],
      properties: {
        error_type_counts: {
          type: 'array',
          items: {
            type: 'object',
            required: ['count', 'error_type'],
            properties: { count, error_type: { type: 'string' } },
          },
        },
        rate: { type: 'number' },
      },
    },
    run_count_gauge: {
      type: 'object',
      required: ['active_count', 'total_count'],
      properties: { active_count: count, total_count: count },
    },
    run_duration_gauge: {
      type: 'object',
      required: ['activity_durations', 'total_seconds'],
      properties: {
        activity_durations: {
          type: 'array',
          items: {
            type: 'object',
            required: ['activity_type', 'seconds'],
            properties: { activity_type: { type: 'string' }, seconds },
          },
        },
        total_seconds: seconds,
      },
    },
    token_count_gauge: {
      type: 'object',
      required: ['by_model', 'input', 'output'],
      properties: {
        by_model: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            required: ['input', 'output'],
            properties: { input: { type: 'number' }, output: { type: 'number' } },
          },
        },
        input: { type: 'number' },
        output: { type: 'number' },
      },
    },
  },
});

interface DashboardQueryParams {
  start_time?: string;
  end_time?: string;
  period?: DashboardPeriod;
  structure_ids?: string[];
}

route<unknown, DashboardQueryParams>({
  operationId: 'GetStructuresDashboard',
  method: 'get',
  path: '/dashboards/structures',
  tag: 'Dashboards',
  summary:
    "Run and deployment gauges of the organization's structures, over the runs and deployments created in " +
    '[start_time, end_time) (default: the last 24 hours), with the duration plot bucketed by `period` (default `hour`, UTC).',
  query: {
    start_time: { ...timestamp, description: 'Start of the window (inclusive). Default: end_time - 24 h.' },
    end_time: { ...timestamp, description: 'End of the window (exclusive). Default: now.' },
    period: {
      type: 'string',
      enum: DASHBOARD_PERIODS,
      description: 'Bucket of duration_plot.timeseries (UTC, weeks start on Monday). Default `hour`.',
    },
    structure_ids: {
      type: 'array',
      items: uuid,
      maxItems: 100,
      description: 'Only these structures (comma-separated or repeated).',
    },
  },
  responses: { 200: { description: 'The dashboard', schema: StructuresDashboardSchema } },
  handler: async ({ deps, caller, query }) => {
    const end = query.end_time ? new Date(query.end_time) : new Date();
    const start = query.start_time ? new Date(query.start_time) : new Date(end.getTime() - DEFAULT_WINDOW_MS);
    // Any window is answered: one with start_time not before end_time is empty, and the timeseries has a
    // point only per period that has ended runs, so its length is bounded by the runs, not by the window.
    const period = query.period ?? 'hour';
    const body = await structuresDashboard(deps.ds, {
      organizationId: caller.organizationId,
      start,
      end,
      period,
      structureIds: query.structure_ids && query.structure_ids.length > 0 ? query.structure_ids : undefined,
    });
    return { status: 200, body };
  },
});

// What the dashboard reads, all from GET /api/runs (every kind) and GET /api/dashboards/structures: runs of a
// window bucketed by status over time, counts by status, the latest failures, and queue depths (QUEUED runs
// per kind; counts come from `pagination.total_count` of one-item pages, so nothing is fetched in bulk).
import { api, data } from './client';
import { RUN_STATUSES, type RunKind, type RunStatus } from './runs';

export interface Window {
  label: string;
  ms: number;
  bucketMs: number;
}
export const WINDOWS: Window[] = [
  { label: 'Last hour', ms: 3_600_000, bucketMs: 300_000 },
  { label: 'Last 24 hours', ms: 86_400_000, bucketMs: 3_600_000 },
  { label: 'Last 7 days', ms: 7 * 86_400_000, bucketMs: 86_400_000 },
];
/** The timeline reads at most this many runs of the window (newest first) and says so when there are more. */
export const TIMELINE_RUNS = 300;
const QUEUE_KINDS: RunKind[] = ['structure', 'function', 'tool', 'assistant'];

export interface Bucket {
  start: number;
  counts: Partial<Record<RunStatus, number>>;
}

export async function runTimeline(window: Window, now: number) {
  const start = Math.floor((now - window.ms) / window.bucketMs) * window.bucketMs;
  const created_after = new Date(start).toISOString();
  const buckets: Bucket[] = [];
  for (let t = start; t <= now; t += window.bucketMs) buckets.push({ start: t, counts: {} });
  let total = 0;
  let read = 0;
  for (let page = 1; read < TIMELINE_RUNS; page++) {
    const list = await data(api.GET('/api/runs', { params: { query: { page, page_size: 100, created_after } } }));
    total = list.pagination.total_count;
    for (const run of list.runs) {
      const bucket = buckets[Math.floor((Date.parse(run.created_at) - start) / window.bucketMs)];
      if (bucket) bucket.counts[run.status] = (bucket.counts[run.status] ?? 0) + 1;
    }
    read += list.runs.length;
    if (page >= list.pagination.total_pages) break;
  }
  return { buckets, total, read };
}

const countOf = async (query: { status?: RunStatus[]; kind?: RunKind[]; created_after?: string }) =>
  (await data(api.GET('/api/runs', { params: { query: { ...query, page_size: 1 } } }))).pagination.total_count;

export async function statusCounts(window: Window, now: number) {
  const created_after = new Date(now - window.ms).toISOString();
  const counts = await Promise.all(RUN_STATUSES.map((s) => countOf({ status: [s], created_after })));
  return RUN_STATUSES.map((status, i) => ({ status, count: counts[i] }));
}

export async function queueDepths() {
  const counts = await Promise.all(QUEUE_KINDS.map((k) => countOf({ status: ['QUEUED'], kind: [k] })));
  return QUEUE_KINDS.map((kind, i) => ({ kind, queued: counts[i] }));
}

export async function recentFailures() {
  return (await data(api.GET('/api/runs', { params: { query: { status: ['FAILED', 'ERROR'], page_size: 10 } } }))).runs;
}

export async function structuresDashboard(window: Window, now: number) {
  return data(
    api.GET('/api/dashboards/structures', {
      params: { query: { start_time: new Date(now - window.ms).toISOString(), end_time: new Date(now).toISOString() } },
    }),
  );
}

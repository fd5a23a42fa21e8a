// The jobs metric of every kind, recorded by the guarded transition once a row moved: the count of jobs that
// ended (tarmac_jobs_ended_total; their creation is counted where they are created, with their workflow:
// insertAndStart), and for timed kinds (runs) the queue-to-start and duration histograms. And the admission's
// queue as a gauge read from PostgreSQL at each scrape (tarmac_execution_slots): what KEDA scales workers on.
import { Gauge } from 'prom-client';
import type { DataSource } from 'typeorm';
import { jobsEnded, queueToStart, registry, runDuration } from '../observability/metrics';
import { LIVE_PLACE } from './admission-reads';
import type { JobKind, Row } from './kinds';

const seconds = (from: Date, to: Date) => Math.max(0, (+to - +from) / 1000);

/** `row` (as moved) reached `to`; `setStarted`: this move set its started_at. */
export function recordMove(kind: JobKind, row: Row, to: string, setStarted: boolean): void {
  const label = kind.resourceKind(row);
  const createdAt = row.created_at as Date;
  const startedAt = row.started_at as Date | null | undefined;
  if (kind.timed && setStarted && startedAt) queueToStart.observe({ kind: label }, seconds(createdAt, startedAt));
  if (!kind.terminal.includes(to)) return;
  jobsEnded.inc({ kind: label, status: to });
  if (!kind.timed) return;
  // From its start, or its creation if it never started.
  const end = (row.completed_at as Date | null) ?? new Date();
  runDuration.observe({ kind: label, status: to }, seconds(startedAt ?? createdAt, end));
}

const QUEUE_METRIC = 'tarmac_execution_slots';

/**
 * Registers tarmac_execution_slots{state}: jobs holding an execution slot, and jobs waiting for one (queued in
 * PostgreSQL, holding no worker), across every organization. Every api reports the same count (one query per
 * scrape): take the max over them. Once per process.
 */
export function startQueueMetrics(ds: DataSource): void {
  if (registry.getSingleMetric(QUEUE_METRIC)) return;
  new Gauge({
    name: QUEUE_METRIC,
    help: 'Jobs holding an execution slot (holding) and waiting for one (waiting), from PostgreSQL; the same on every api',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const rows = (await ds.query(
        `SELECT count(*) FILTER (WHERE state = 'HOLDING')::int AS holding,
                count(*) FILTER (WHERE state = 'WAITING' AND ${LIVE_PLACE})::int AS waiting
           FROM execution_slots`,
      )) as Array<{ holding: number; waiting: number }>;
      this.set({ state: 'holding' }, rows[0].holding);
      this.set({ state: 'waiting' }, rows[0].waiting);
    },
  });
}

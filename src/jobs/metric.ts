// The jobs metric of every kind, recorded by the guarded transition once a row moved: the count of jobs that
// ended (tarmac_jobs_ended_total; their creation is counted where they are created, with their workflow:
// insertAndStart), and for timed kinds (runs) the queue-to-start and duration histograms.
import { jobsEnded, queueToStart, runDuration } from '../observability/metrics';
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

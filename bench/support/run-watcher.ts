// Sees our runs end the way an api client would learn it soonest: the run_updates notification (sent on
// every status change), then a read of the row. Reads are batched (one query for all runs that were
// notified since the last one), so watching a thousand runs costs a few queries, not thousands.
//
// A run can also be lost: its row says QUEUED but its workflow has already ended (it found no row, see
// RESULTS.md). Nothing is notified for such a run, so when no watched run has moved for a while, the
// watcher asks Temporal about the ones still waiting and reports those whose workflow is closed.
import type { Client as TemporalClient } from '@temporalio/client';
import type { Client } from 'pg';
import { parseRunPayload, RUN_CHANNEL } from '../../src/services/code/runs/state';
import { isTerminal } from '../../src/services/code/runs/lifecycle';
import type { RunStatus } from '../../src/persistence/entities/run';
import { workflowIdOf } from '../../src/temporal/workflow-start';
import { pgClient } from './pg';

export interface RunEnd {
  /** The terminal status; the status it had when the wait ended otherwise (timedOut, lost). */
  status: RunStatus;
  timedOut: boolean;
  /** status_detail.reason of an ended run (e.g. WorkerLost for an ERROR). */
  reason: string | null;
  /** The row is not terminal but its workflow has ended: nothing will ever move it (until the reconciler). */
  lost: boolean;
  /** Date.now() when the terminal status (or the loss) was read. */
  seenAt: number;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
}

/** Runs nobody is notified about are read anyway this often (a lost notification costs time, not a hang). */
const RECHECK_MS = 1_000;
/** After this long without any watched run moving, the waiting ones are checked for a closed workflow. */
const QUIET_MS = 5_000;
/** Workflows described per check (bounded load on Temporal). */
const DESCRIBE_BATCH = 50;

interface Waiting {
  resolve: (end: RunEnd) => void;
  kind?: string;
  status?: RunStatus;
}

export class RunWatcher {
  private readonly client: Client;
  private readonly waiting = new Map<string, Waiting>();
  private readonly dirty = new Set<string>();
  private reading = false;
  private checking = false;
  private lastMove = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    databaseUrl: string,
    private readonly temporal: TemporalClient,
  ) {
    this.client = pgClient(databaseUrl, 'tarmac-bench-watch');
  }

  async start(): Promise<void> {
    await this.client.connect();
    this.client.on('notification', (msg) => {
      const runId = msg.channel === RUN_CHANNEL && msg.payload ? parseRunPayload(msg.payload).runId : undefined;
      if (runId && this.waiting.has(runId)) {
        this.lastMove = Date.now();
        this.mark(runId);
      }
    });
    await this.client.query(`LISTEN ${RUN_CHANNEL}`);
    this.timer = setInterval(() => {
      for (const id of this.waiting.keys()) this.mark(id);
      if (this.waiting.size && Date.now() - this.lastMove > QUIET_MS) void this.findLost();
    }, RECHECK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.client.end();
  }

  /** Resolves once the run is terminal or lost, or after `timeoutMs` with its status then (timedOut). */
  ended(runId: string, timeoutMs: number): Promise<RunEnd> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const w = this.waiting.get(runId);
        this.waiting.delete(runId);
        resolve(this.endOf(w?.status ?? 'QUEUED', { timedOut: true }));
      }, timeoutMs);
      this.waiting.set(runId, {
        resolve: (end) => {
          clearTimeout(timer);
          resolve(end);
        },
      });
      this.mark(runId); // it may have ended before we started watching
    });
  }

  private endOf(
    status: RunStatus,
    how: { timedOut?: boolean; lost?: boolean },
    row?: { created_at: Date; started_at: Date | null; completed_at: Date | null; reason?: string | null },
  ): RunEnd {
    return {
      status,
      timedOut: how.timedOut ?? false,
      lost: how.lost ?? false,
      reason: row?.reason ?? null,
      seenAt: Date.now(),
      createdAt: row?.created_at.getTime() ?? NaN,
      startedAt: row?.started_at?.getTime() ?? null,
      completedAt: row?.completed_at?.getTime() ?? null,
    };
  }

  private mark(runId: string): void {
    this.dirty.add(runId);
    this.read().catch((err) => console.error(`run watcher: ${(err as Error).message}`));
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      while (this.dirty.size) {
        const ids = [...this.dirty];
        this.dirty.clear();
        const { rows } = await this.client.query(
          `SELECT run_id, kind, status, created_at, started_at, completed_at, status_detail->>'reason' AS reason
             FROM runs WHERE run_id = ANY($1::uuid[])`,
          [ids],
        );
        for (const r of rows) {
          const w = this.waiting.get(r.run_id);
          if (!w) continue;
          if (w.status !== r.status) this.lastMove = Date.now();
          w.kind = r.kind;
          w.status = r.status;
          if (!isTerminal(r.status)) continue;
          this.waiting.delete(r.run_id);
          w.resolve(this.endOf(r.status, {}, r));
        }
      }
    } finally {
      this.reading = false;
    }
  }

  private async findLost(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const candidates = [...this.waiting.entries()]
        .filter(([, w]) => w.kind && w.status && !isTerminal(w.status))
        .slice(0, DESCRIBE_BATCH);
      for (const [runId, w] of candidates) {
        const state = await this.temporal.workflow
          .getHandle(workflowIdOf(`${w.kind}-run` as Parameters<typeof workflowIdOf>[0], runId))
          .describe()
          .then(
            (d) => d.status.name,
            () => 'NOT_FOUND',
          );
        if (state === 'RUNNING' || !this.waiting.has(runId)) continue;
        // Read once more: the row may have ended between our last read and the workflow's close.
        const {
          rows: [r],
        } = await this.client.query(`SELECT status, created_at, started_at, completed_at FROM runs WHERE run_id = $1`, [
          runId,
        ]);
        this.waiting.delete(runId);
        w.resolve(this.endOf(r.status, { lost: !isTerminal(r.status) }, r));
      }
      this.lastMove = Date.now(); // next check after another quiet period
    } finally {
      this.checking = false;
    }
  }
}

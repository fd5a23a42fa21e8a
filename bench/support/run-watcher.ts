// Sees our runs end the way an api client would learn it soonest: the run_updates notification (sent on
// every status change), then a read of the row. Reads are batched (one query for all runs that were
// notified since the last one), so watching a thousand runs costs a few queries, not thousands.
import type { Client } from 'pg';
import { RUN_CHANNEL } from '../../src/services/run-state';
import { isTerminal } from '../../src/services/run-lifecycle';
import type { RunStatus } from '../../src/persistence/entities/run';
import { pgClient } from './pg';

export interface RunEnd {
  /** The terminal status; a non-terminal one when the wait timed out. */
  status: RunStatus;
  timedOut: boolean;
  /** Date.now() when the terminal status was read. */
  seenAt: number;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
}

/** Runs nobody is notified about are read anyway this often (a lost notification costs time, not a hang). */
const RECHECK_MS = 1_000;

export class RunWatcher {
  private readonly client: Client;
  private readonly waiting = new Map<string, (end: RunEnd) => void>();
  private readonly dirty = new Set<string>();
  private reading = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(databaseUrl: string) {
    this.client = pgClient(databaseUrl, 'tarmac-bench-watch');
  }

  async start(): Promise<void> {
    await this.client.connect();
    this.client.on('notification', (msg) => {
      if (msg.channel === RUN_CHANNEL && msg.payload && this.waiting.has(msg.payload)) this.mark(msg.payload);
    });
    await this.client.query(`LISTEN ${RUN_CHANNEL}`);
    this.timer = setInterval(() => {
      for (const id of this.waiting.keys()) this.mark(id);
    }, RECHECK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.client.end();
  }

  /** Resolves once the run is terminal, or after `timeoutMs` with its status then (timedOut). */
  ended(runId: string, timeoutMs: number): Promise<RunEnd> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(runId);
        this.client.query(`SELECT status, created_at, started_at FROM runs WHERE run_id = $1`, [runId]).then(
          ({ rows: [r] }) => resolve({
            status: r?.status, timedOut: true, seenAt: Date.now(), createdAt: r?.created_at?.getTime(),
            startedAt: r?.started_at?.getTime() ?? null, completedAt: null,
          }),
          () => resolve({ status: 'QUEUED', timedOut: true, seenAt: Date.now(), createdAt: NaN, startedAt: null, completedAt: null }),
        );
      }, timeoutMs);
      this.waiting.set(runId, (end) => {
        clearTimeout(timer);
        resolve(end);
      });
      this.mark(runId); // it may have ended before we started watching
    });
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
          `SELECT run_id, status, created_at, started_at, completed_at FROM runs WHERE run_id = ANY($1::uuid[])`, [ids],
        );
        const now = Date.now();
        for (const r of rows) {
          const resolve = this.waiting.get(r.run_id);
          if (!resolve || !isTerminal(r.status)) continue;
          this.waiting.delete(r.run_id);
          resolve({
            status: r.status, timedOut: false, seenAt: now, createdAt: r.created_at.getTime(),
            startedAt: r.started_at?.getTime() ?? null, completedAt: r.completed_at?.getTime() ?? null,
          });
        }
      }
    } finally {
      this.reading = false;
    }
  }
}

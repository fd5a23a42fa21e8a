// One PostgreSQL connection per api process LISTENs on `run_updates` (payload: a run id) and wakes the
// streams of that run in this process. Notifications only say "look again": streams always read the data
// from the database, and re-check periodically too, so a lost notification (or a reconnect) costs latency,
// never an event.
import { Client } from 'pg';
import type { Logger } from '../logger';
import { RUN_CHANNEL } from '../services/runs/state';

export interface RunListener {
  /** Something of the run may have changed. */
  update(): void;
  /** The api process is shutting down: end the stream. */
  close(): void;
}

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export class RunUpdatesHub {
  private client: Client | undefined;
  private readonly listeners = new Map<string, Set<RunListener>>();
  private closed = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  /** Connects and LISTENs; resolves once listening. */
  async start(): Promise<void> {
    await this.connect();
  }

  subscribe(runId: string, listener: RunListener): () => void {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (!set!.size && this.listeners.get(runId) === set) this.listeners.delete(runId);
    };
  }

  /** Number of open subscriptions (for tests and diagnostics). */
  get subscriptionCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  /** Ends every stream of this process and the LISTEN connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const set of [...this.listeners.values()]) for (const l of [...set]) l.close();
    this.listeners.clear();
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl, application_name: 'tarmac-api-listen' });
    client.on('notification', (msg) => {
      if (msg.channel === RUN_CHANNEL && msg.payload) this.wake(msg.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${RUN_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.reconnectDelay = RECONNECT_MIN_MS;
    // Anything may have happened while we were not listening.
    for (const runId of this.listeners.keys()) this.wake(runId);
  }

  private lost(client: Client, err?: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.log.warn({ err }, 'LISTEN connection lost; reconnecting (streams fall back to periodic re-checks meanwhile)');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(delay * 2, RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch((err) => {
        this.log.warn({ err }, 'LISTEN reconnect failed');
        this.scheduleReconnect();
      });
    }, delay);
    this.reconnectTimer.unref();
  }

  private wake(runId: string): void {
    const set = this.listeners.get(runId);
    if (set) for (const l of [...set]) l.update();
  }
}

// One PostgreSQL connection per api process (and per worker, for the waits of its activities) LISTENs on `run_updates` (payload: a run id and a time) and wakes the
// streams of that run in this process. Notifications only say "look again": streams always read the data
// from the database, and re-check periodically too, so a lost notification (or a reconnect) costs latency,
// never an event. Streams of an organization's run changes subscribe by organization: they wake on the
// notifications that name it (status changes and new runs). The same connection LISTENs on `api_key_changes` (payload: a key's hash, in hex) for the
// cache of authenticated keys, which it tells when to forget a key, and to forget all (and not be trusted)
// while it is not listening.
import { Client } from 'pg';
import type { Logger } from '../logger';
import { parseRunPayload, RUN_CHANNEL } from './run-feed';
import { notifyLag } from '../observability/metrics';

/** Notified (by a trigger on `api_keys`) with the hex hash of a key deactivated or deleted. */
export const API_KEY_CHANNEL = 'api_key_changes';

/** What the hub tells a cache of authenticated keys. */
export interface KeyChangeListener {
  /** The key with this hash (hex) changed: forget it. */
  changed(keyHashHex: string): void;
  /** Notifications may have been missed (connection lost or restored): forget every key. */
  reset(): void;
}

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
  private readonly orgListeners = new Map<string, Set<RunListener>>();
  private closed = false;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keyListener: KeyChangeListener | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
    /** Its connection's application_name (the api's, or the worker's). */
    private readonly applicationName = 'tarmac-api-listen',
  ) {}

  /** Connects and LISTENs; resolves once listening. */
  async start(): Promise<void> {
    await this.connect();
  }

  subscribe(runId: string, listener: RunListener): () => void {
    return addTo(this.listeners, runId, listener);
  }

  /** Tells `listener` of the status changes and new runs of `organizationId`'s runs. */
  subscribeOrganization(organizationId: string, listener: RunListener): () => void {
    return addTo(this.orgListeners, organizationId, listener);
  }

  /** Tells `listener` of every key change (one listener: the process's key cache). */
  onKeyChange(listener: KeyChangeListener): void {
    this.keyListener = listener;
  }

  /** True while notifications arrive: a cache may be trusted only then. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Number of open subscriptions (for tests and diagnostics). */
  get subscriptionCount(): number {
    let n = 0;
    for (const map of [this.listeners, this.orgListeners]) for (const set of map.values()) n += set.size;
    return n;
  }

  /** Ends every stream of this process and the LISTEN connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const map of [this.listeners, this.orgListeners]) {
      for (const set of [...map.values()]) for (const l of [...set]) l.close();
      map.clear();
    }
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl, application_name: this.applicationName });
    client.on('notification', (msg) => {
      if (msg.channel === RUN_CHANNEL && msg.payload) {
        const { runId, sentAtMs, organizationId } = parseRunPayload(msg.payload);
        if (sentAtMs !== undefined) notifyLag.observe(Math.max(0, Date.now() - sentAtMs) / 1000);
        this.wake(this.listeners, runId);
        if (organizationId) this.wake(this.orgListeners, organizationId);
      } else if (msg.channel === API_KEY_CHANNEL && msg.payload) this.keyListener?.changed(msg.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${RUN_CHANNEL}; LISTEN ${API_KEY_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.reconnectDelay = RECONNECT_MIN_MS;
    // Anything may have happened while we were not listening.
    this.keyListener?.reset();
    for (const map of [this.listeners, this.orgListeners]) for (const key of map.keys()) this.wake(map, key);
  }

  private lost(client: Client, err?: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = undefined;
    this.keyListener?.reset();
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

  private wake(listeners: Map<string, Set<RunListener>>, key: string): void {
    const set = listeners.get(key);
    if (set) for (const l of [...set]) l.update();
  }
}

/** Adds `listener` under `key`; returns its removal (which drops the key's set once empty). */
function addTo(listeners: Map<string, Set<RunListener>>, key: string, listener: RunListener): () => void {
  let set = listeners.get(key);
  if (!set) listeners.set(key, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
    if (!set.size && listeners.get(key) === set) listeners.delete(key);
  };
}

/** Subscribes `wake` to notifications of a change; returns the unsubscribe (see `waitFor`). */
export type WakeUps = (wake: () => void) => () => void;

/** Wake-ups from the updates of run `runId`, when the process listens. */
export const runWakeUps = (hub: RunUpdatesHub | undefined, runId: string): WakeUps | undefined =>
  hub && ((wake) => hub.subscribe(runId, { update: wake, close: wake }));

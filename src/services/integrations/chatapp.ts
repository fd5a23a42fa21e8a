// The chat app side (Slack's wire protocol): the app manifest the user pastes into the chat app, what a signed
// delivery means (URL verification, an event callback, a slash command), the channel thread ↔ our thread
// mapping, and posting an answer with the bot token through the Web API (`chat.postMessage`).
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Integration, IntegrationSettings } from '../../persistence/entities/integration';
import { Thread } from '../../persistence/entities';

/** Scopes the bot needs: read messages and mentions where it is, write answers, slash commands. */
const BOT_SCOPES = [
  'app_mentions:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'chat:write',
  'commands',
];
const BOT_EVENTS = ['app_mention', 'message.channels', 'message.groups', 'message.im', 'message.mpim'];

/** `/<app_name>`, in the characters slash commands allow (lowercase, at most 32 with the slash). */
export const slashCommandOf = (appName: string) =>
  `/${
    appName
      .toLowerCase()
      .replace(/[^a-z0-9_-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 31) || 'ask'
  }`;

/** The manifest to create the app from: its name, bot user, scopes, event subscription and slash command. */
export function appManifest(settings: IntegrationSettings, endpoint: string) {
  const displayName = settings.app_display_name ?? settings.app_name ?? '';
  return {
    display_information: { name: settings.app_name ?? '', description: settings.app_description ?? '' },
    features: {
      bot_user: { display_name: displayName, always_online: true },
      slash_commands: [
        {
          command: slashCommandOf(settings.app_name ?? ''),
          url: endpoint,
          description: settings.app_description || `Ask ${displayName}`,
          should_escape: false,
        },
      ],
    },
    oauth_config: { scopes: { bot: BOT_SCOPES } },
    settings: {
      event_subscriptions: { request_url: endpoint, bot_events: BOT_EVENTS },
      interactivity: { is_enabled: false },
      org_deploy_enabled: false,
      socket_mode_enabled: false,
      token_rotation_enabled: false,
    },
  };
}

/** A message the delivery answers: where it came from and what it says. */
export interface ChatMessage {
  text: string;
  channel: string;
  /** The thread to answer in (the message's own ts when it starts one). */
  threadTs?: string;
  user?: string;
}

export type ChatappDelivery =
  | { kind: 'challenge'; challenge: string }
  | { kind: 'ignored'; event: string; reason: string; key?: string }
  | { kind: 'message'; event: string; key: string; message: ChatMessage };

/**
 * What a verified delivery asks for. Events API bodies are JSON (`url_verification`, `event_callback`); slash
 * commands are form-encoded. The app's own and other bots' messages, edits and other subtypes are ignored
 * (answering them would loop).
 */
export function readChatappDelivery(rawBody: string, contentType: string): ChatappDelivery | undefined {
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(rawBody);
    const command = form.get('command');
    const channel = form.get('channel_id');
    if (!command || !channel) return undefined;
    return {
      kind: 'message',
      event: 'slash_command',
      key: `command:${form.get('trigger_id') ?? randomUUID()}`,
      message: { text: form.get('text') ?? '', channel, user: form.get('user_id') ?? undefined },
    };
  }
  let body: any;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return undefined;
  }
  if (body?.type === 'url_verification' && typeof body.challenge === 'string')
    return { kind: 'challenge', challenge: body.challenge };
  if (body?.type !== 'event_callback' || typeof body.event !== 'object' || body.event === null) return undefined;
  const e = body.event;
  const key = typeof body.event_id === 'string' ? body.event_id : undefined;
  const event = typeof e.type === 'string' ? e.type : 'unknown';
  if (!key) return undefined;
  if (event !== 'message' && event !== 'app_mention')
    return { kind: 'ignored', event, reason: `Events of type ${event} start nothing`, key };
  if (e.bot_id || e.subtype || e.app_id)
    return { kind: 'ignored', event, reason: 'A bot message, the app own or an edit: not answered', key };
  if (typeof e.channel !== 'string' || typeof e.text !== 'string' || typeof e.ts !== 'string') return undefined;
  return {
    kind: 'message',
    event,
    key,
    message: { text: e.text, channel: e.channel, threadTs: e.thread_ts ?? e.ts, user: e.user },
  };
}

/**
 * Our thread for a channel thread: one per (integration, channel, thread ts), found by its alias, created on
 * first use. Assistant runs in it see the conversation so far.
 */
export async function threadFor(ds: DataSource, integration: Integration, m: ChatMessage): Promise<string> {
  const alias = `chatapp:${integration.integration_id}:${m.channel}:${m.threadTs ?? 'channel'}`;
  const now = new Date();
  await ds.query(
    `INSERT INTO threads (thread_id, organization_id, name, alias, metadata, created_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (organization_id, alias) WHERE alias IS NOT NULL DO NOTHING`,
    [
      randomUUID(),
      integration.organization_id,
      `${integration.name}: ${m.channel}`,
      alias,
      JSON.stringify({ integration_id: integration.integration_id, channel: m.channel, thread_ts: m.threadTs ?? null }),
      integration.created_by,
      now,
    ],
  );
  const thread = await ds
    .getRepository(Thread)
    .findOneByOrFail({ organization_id: integration.organization_id, alias });
  return thread.thread_id;
}

export class ChatappError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** auth.test: who the bot token is (its user id: messages from it are the app's own). */
export async function botIdentity(baseUrl: string, botToken: string): Promise<{ userId: string; botId?: string }> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/auth.test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${botToken}` },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ChatappError(`The chat app could not be reached: ${(err as Error).message}`, true);
  }
  if (res.status === 429 || res.status >= 500) throw new ChatappError(`The chat app answered ${res.status}`, true);
  const body = (await res.json().catch(() => ({}))) as {
    ok?: boolean;
    error?: string;
    user_id?: string;
    bot_id?: string;
  };
  if (!body.ok || !body.user_id)
    throw new ChatappError(`auth.test refused the bot token: ${body.error ?? `HTTP ${res.status}`}`, false);
  return { userId: body.user_id, botId: body.bot_id };
}

/** chat.postMessage with the bot token; the Web API answers 200 `{ok: false, error}` for refusals. */
export async function postMessage(
  baseUrl: string,
  botToken: string,
  m: { channel: string; text: string; threadTs?: string },
  signal?: AbortSignal,
): Promise<{ ts: string }> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${botToken}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel: m.channel, text: m.text, ...(m.threadTs ? { thread_ts: m.threadTs } : {}) }),
      signal: signal ?? AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new ChatappError(`The chat app could not be reached: ${(err as Error).message}`, true);
  }
  if (res.status === 429 || res.status >= 500) throw new ChatappError(`The chat app answered ${res.status}`, true);
  const body = (await res.json().catch(() => ({}))) as { ok?: boolean; error?: string; ts?: string };
  if (!body.ok) throw new ChatappError(`chat.postMessage refused: ${body.error ?? `HTTP ${res.status}`}`, false);
  return { ts: body.ts ?? '' };
}

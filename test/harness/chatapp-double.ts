/**
 * A local chat app (Slack's wire protocol) for tests (node:http): the Web API the platform calls,
 * `POST /api/chat.postMessage` and `POST /api/auth.test`, authenticated with a bot token (`Authorization:
 * Bearer xoxb-...`), answering 200 `{ok: true, ...}` or `{ok: false, error}` as Slack does; and the sending side,
 * `signed(...)`: the headers Slack puts on a delivery (X-Slack-Signature v0, X-Slack-Request-Timestamp).
 *
 *   const chat = await startChatAppDouble();            // the stack runs one: getStack().chatApp
 *   const bot = chat.addBot();                          // a workspace bot: its token, user and bot ids
 *   chat.hold(true);                                    // postMessage waits until hold(false): a slow chat app
 *   const headers = signedDelivery(secret, body);       // or signedDelivery(secret, body, { timestamp })
 *   await chat.waitForPost((p) => p.channel === 'C1');  // the posts it received, in order: chat.posts
 */
import http from 'node:http';
import type net from 'node:net';
import { createHmac, randomBytes } from 'node:crypto';

export interface Post {
  token: string;
  channel: string;
  text: string;
  thread_ts?: string;
  ts: string;
}

export interface ChatAppDouble {
  /** CHATAPP_API_BASE_URL: `<origin>/api`. */
  baseUrl: string;
  posts: Post[];
  addBot(): { token: string; userId: string; botId: string };
  hold(on: boolean): void;
  /** Resolves once a matching postMessage request has arrived (answered or held). */
  arrived(match: (p: Omit<Post, 'ts'>) => boolean): Promise<void>;
  waitForPost(match: (p: Post) => boolean): Promise<Post>;
  close(): Promise<void>;
}

/** The headers of a delivery signed the way Slack signs it (v0 = HMAC-SHA256 over `v0:<ts>:<body>`). */
export function signedDelivery(secret: string, body: string, opts: { timestamp?: number } = {}) {
  const ts = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const sig = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  return { 'x-slack-request-timestamp': ts, 'x-slack-signature': sig };
}

export async function startChatAppDouble(): Promise<ChatAppDouble> {
  const bots = new Map<string, { userId: string; botId: string }>();
  const posts: Post[] = [];
  const waiters: Array<() => void> = [];
  let held = false;
  let released: Array<() => void> = [];
  const arrivals: Array<Omit<Post, 'ts'>> = [];
  let seq = 0;
  const notify = () => waiters.splice(0).forEach((w) => w());

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const answer = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
      };
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const bot = token ? bots.get(token) : undefined;
      if (!token) return answer({ ok: false, error: 'not_authed' });
      if (!bot) return answer({ ok: false, error: 'invalid_auth' });
      if (req.method === 'POST' && req.url === '/api/auth.test') {
        return answer({
          ok: true,
          url: 'https://double.example/',
          team: 'Double',
          user: 'bot',
          team_id: 'T1',
          user_id: bot.userId,
          bot_id: bot.botId,
        });
      }
      if (req.method === 'POST' && req.url === '/api/chat.postMessage') {
        if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
          return answer({ ok: false, error: 'invalid_form_data' });
        let body: any;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return answer({ ok: false, error: 'invalid_json' });
        }
        if (typeof body.channel !== 'string' || !body.channel) return answer({ ok: false, error: 'channel_not_found' });
        if (typeof body.text !== 'string' || !body.text) return answer({ ok: false, error: 'no_text' });
        const arrival = {
          token,
          channel: body.channel,
          text: body.text,
          ...(body.thread_ts ? { thread_ts: body.thread_ts } : {}),
        };
        arrivals.push(arrival);
        notify();
        if (held) await new Promise<void>((r) => released.push(r));
        const post: Post = { ...arrival, ts: `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, '0')}` };
        posts.push(post);
        notify();
        return answer({
          ok: true,
          channel: post.channel,
          ts: post.ts,
          message: { type: 'message', text: post.text, bot_id: bot.botId, ts: post.ts },
        });
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: false, error: 'unknown_method' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  const until = async <T>(find: () => T | undefined, what: string): Promise<T> => {
    const deadline = Date.now() + 150_000;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`chat app double: no ${what} arrived`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };

  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    posts,
    addBot: () => {
      const token = `xoxb-${randomBytes(12).toString('hex')}`;
      const ids = {
        userId: `U${randomBytes(4).toString('hex').toUpperCase()}`,
        botId: `B${randomBytes(4).toString('hex').toUpperCase()}`,
      };
      bots.set(token, ids);
      return { token, ...ids };
    },
    hold: (on) => {
      held = on;
      if (!on) released.splice(0).forEach((r) => r());
    },
    arrived: async (match) => {
      await until(() => (arrivals.some(match) ? true : undefined), 'postMessage request');
    },
    waitForPost: (match) => until(() => posts.find(match), 'post'),
    close: async () => {
      held = false;
      released.splice(0).forEach((r) => r());
      released = [];
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

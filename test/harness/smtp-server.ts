// A real SMTP server for tests (docs/people.md#invites): Python's aiosmtpd, from PyPI (pinned, into a venv cached
// outside the repository: python-venv.ts), started on a free loopback port with its Mailbox handler, which keeps
// every message it accepts in a Maildir. `messages()` reads them back, bodies decoded.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pythonVenv } from './python-venv';
import { freePort } from './ports';

const AIOSMTPD = 'aiosmtpd==1.4.6';

export interface Mail {
  to: string;
  subject: string;
  from: string;
  text: string;
}

export interface SmtpServer {
  url: string;
  messages(): Mail[];
  stop(): Promise<void>;
}

/** A message as nodemailer writes it: headers, then a text body, quoted-printable when lines are long. */
function parse(raw: string): Mail {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  let text = rest.join('\n\n');
  if (/quoted-printable/i.test(headers.get('content-transfer-encoding') ?? ''))
    text = text
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return { to: headers.get('to') ?? '', from: headers.get('from') ?? '', subject: headers.get('subject') ?? '', text };
}

export async function startSmtpServer(): Promise<SmtpServer> {
  const python = await pythonVenv('aiosmtpd', [AIOSMTPD]);
  const port = await freePort();
  const maildir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-smtp-'));
  const box = path.join(maildir, 'box');
  const child: ChildProcess = spawn(
    python,
    ['-m', 'aiosmtpd', '-n', '-l', `127.0.0.1:${port}`, '-c', 'aiosmtpd.handlers.Mailbox', box],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`aiosmtpd exited (${child.exitCode}): ${stderr}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (i > 300) {
      child.kill('SIGKILL');
      throw new Error(`aiosmtpd did not listen on ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages: () => {
      const dir = path.join(box, 'new');
      if (!fs.existsSync(dir)) return [];
      return fs
        .readdirSync(dir)
        .map((f) => ({ f, at: fs.statSync(path.join(dir, f)).mtimeMs }))
        .sort((a, b) => a.at - b.at)
        .map(({ f }) => parse(fs.readFileSync(path.join(dir, f), 'utf8')));
    },
    stop: async () => {
      process.removeListener('exit', orphanGuard);
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(maildir, { recursive: true, force: true });
    },
  };
}

// What the supervisor prints: every line prefixed with the name of whom it is about (`[start]`,
// `[api]`, ...), in colour only on a terminal; its own progress on stdout, its errors in red on stderr.
// Paths are shown short (relative to the working directory, `~` for the home directory).
import os from 'node:os';
import path from 'node:path';

export const tty = process.stdout.isTTY === true;
const paint = (code: string, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = (s: string) => paint('1', s);
export const red = (s: string) => paint('1;31', s);
export const green = (s: string) => paint('32', s);

const PREFIX_WIDTH = 10;
const COLORS: Record<string, string> = { start: '1', api: '36', worker: '35', temporal: '33', postgres: '34' };
export function prefix(name: string): string {
  return paint(COLORS[name] ?? '0', `[${name}]`.padEnd(PREFIX_WIDTH));
}

/** A progress line (or several) of the supervisor itself. */
export function say(message: string): void {
  for (const line of message.split('\n')) process.stdout.write(`${prefix('start')} ${line}\n`);
}

/** An error or warning of the supervisor itself, in red on stderr. */
export function shout(message: string): void {
  for (const line of message.split('\n')) process.stderr.write(`${prefix('start')} ${red(line)}\n`);
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
export const home = (p: string) => (p.startsWith(os.homedir() + path.sep) ? `~${p.slice(os.homedir().length)}` : p);
export const rel = (p: string) => {
  const r = path.relative(process.cwd(), p);
  return r && !r.startsWith('..') && !path.isAbsolute(r) ? r : p;
};

// The supervisor's child processes (the Temporal dev server, the api, the worker). Each runs in the
// repository root; every line it prints is shown prefixed with its name (pino JSON made readable). An
// exit the supervisor did not ask for is reported to `onUnexpectedExit` exactly once; `stop` asks it to
// stop and kills it if it has not exited in time.
import { ChildProcess, spawn } from 'node:child_process';
import readline from 'node:readline';
import { prettyFactory } from 'pino-pretty';
import { prefix, seconds, shout, tty } from './output';
import { REPO_ROOT } from './paths';

export type OnUnexpectedExit = (name: string, code: number | null, signal: NodeJS.Signals | null) => void;

const pretty = prettyFactory({
  colorize: tty,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,component',
  singleLine: true,
});

/** One output line of a child: pino JSON is made readable, anything else is printed as it is. */
export function printChildLine(name: string, line: string, toStderr: boolean): void {
  let text = line;
  if (line.startsWith('{')) {
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (typeof parsed.level === 'number' && 'msg' in parsed) text = pretty(parsed).trimEnd();
    } catch {
      // not JSON after all
    }
  }
  const out = toStderr ? process.stderr : process.stdout;
  for (const l of text.split('\n')) out.write(`${prefix(name)} ${l}\n`);
}

export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `killed by ${signal}`;
  if (code === null) return 'failed to start';
  return `exit code ${code}`;
}

export class Child {
  readonly proc: ChildProcess;
  /** Set once we asked it to stop: its exit is then expected. */
  stopping = false;
  quiet = false;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    onUnexpectedExit: OnUnexpectedExit,
  ) {
    this.proc = spawn(command, args, { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const [stream, isErr] of [
      [this.proc.stdout!, false],
      [this.proc.stderr!, true],
    ] as const) {
      readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        if (!this.quiet) printChildLine(name, line, isErr);
      });
    }
    this.exited = new Promise((resolve) => {
      this.proc.on('error', (err) => {
        shout(`${name}: could not run ${command}: ${err.message}`);
        resolve({ code: null, signal: null });
        if (!this.stopping) onUnexpectedExit(name, null, null);
      });
      this.proc.on('exit', (code, signal) => {
        resolve({ code, signal });
        if (!this.stopping) onUnexpectedExit(name, code, signal);
      });
    });
  }

  get running(): boolean {
    return this.proc.pid !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Asks it to stop with `signal`; after `timeoutMs` kills it. Resolves once it has exited. */
  async stop(signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
    this.stopping = true;
    if (!this.running) return;
    const timer = setTimeout(() => {
      shout(`${this.name} did not stop within ${seconds(timeoutMs)}; killing it`);
      this.proc.kill('SIGKILL');
    }, timeoutMs);
    this.proc.kill(signal);
    await this.exited;
    clearTimeout(timer);
  }

  kill(): void {
    this.stopping = true;
    if (this.running) this.proc.kill('SIGKILL');
  }
}

// The drills' independent witness of user code: an HTTP server on the host's own address to which every
// execution of the drill program reports itself (started, each event the api accepted, finished). A run's
// loopback is its own (a network namespace per run), and its way to the host's address goes through the
// run-uid firewall, so the witness opens a hole for its own address and port there
// (TARMAC_SANDBOX_ALLOW, comment "tarmac drill witness <pid>"), as an operator would for a service of theirs,
// and closes it again; a hole left by a crashed drill is removed by the next worker (its pid is gone).
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { findTool } from '../../src/runtime/process/confine';

export interface Execution {
  /** Random per execution of the program (a sandboxed pid is only unique inside its namespace). */
  id: string;
  notes: string[];
}

/** One note as the witness received it: when (its clock, ms), from which execution. */
export interface TimedNote {
  execution: string;
  note: string;
  at: number;
}

export class Witness {
  private readonly marks = new Map<string, Map<string, string[]>>();
  private readonly timed = new Map<string, TimedNote[]>();
  private server!: http.Server;
  private rule: string[] | undefined;
  url = '';

  static async start(): Promise<Witness> {
    const w = new Witness();
    w.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        try {
          const { run, execution, note } = JSON.parse(body) as { run: string; execution: string; note: string };
          const byExecution = w.marks.get(run) ?? new Map<string, string[]>();
          byExecution.set(execution, [...(byExecution.get(execution) ?? []), note]);
          w.marks.set(run, byExecution);
          w.timed.set(run, [...(w.timed.get(run) ?? []), { execution, note, at: Date.now() }]);
          res.writeHead(204).end();
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    const address =
      Object.values(os.networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? '127.0.0.1';
    await new Promise<void>((resolve) => w.server.listen(0, address, resolve));
    const { port } = w.server.address() as AddressInfo;
    w.url = `http://${address}:${port}/mark`;
    const iptables = findTool('iptables');
    if (iptables) {
      w.rule = [
        'TARMAC_SANDBOX_ALLOW',
        '-d',
        address,
        '-p',
        'tcp',
        '--dport',
        String(port),
        '-m',
        'comment',
        '--comment',
        `tarmac drill witness ${process.pid}`,
        '-j',
        'ACCEPT',
      ];
      try {
        execFileSync(iptables, ['-w', '5', '-N', 'TARMAC_SANDBOX_ALLOW'], { stdio: 'ignore' });
      } catch {
        // a worker made it already
      }
      execFileSync(iptables, ['-w', '5', '-A', ...w.rule]);
    }
    return w;
  }

  executionsOf(runId: string): Execution[] {
    return [...(this.marks.get(runId) ?? new Map<string, string[]>()).entries()].map(([id, notes]) => ({ id, notes }));
  }

  /** The run's notes in the order they arrived, with their arrival times. */
  notesOf(runId: string): TimedNote[] {
    return this.timed.get(runId) ?? [];
  }

  async close(): Promise<void> {
    const iptables = findTool('iptables');
    if (iptables && this.rule) {
      try {
        execFileSync(iptables, ['-w', '5', '-D', ...this.rule], { stdio: 'ignore' });
      } catch {
        // not installed
      }
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// What the cluster drill (cluster.ts) measures and audits besides checkRuns: CPU and memory of each host of the
// production shape under the load (from /proc: a host's process with everything under it, e.g. a worker with
// its runs' sandboxes, sampled every 500 ms), and that every workflow of the drill is listed in the cluster's visibility with the
// platform's search attributes (src/temporal/search-attributes.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { ORGANIZATION_ID, RESOURCE_ID, RESOURCE_KIND } from '../../src/temporal/search-attributes';
import type { ResourceKind } from '../../src/temporal/workflow-start';
import { descendantsOf, Findings, sleep } from './kit';

export interface HostRoot {
  name: string;
  pid: number;
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** A process's own CPU ticks (utime + stime: a reaped child's are not added, it is sampled itself) and PSS. */
function statOf(pid: number): { ticks: number; pssKb: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces), from field 3: utime is 14, stime 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // PSS, not RSS: PostgreSQL's backends share its buffers, which RSS would count once per backend.
    const pss = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+)/m);
    return { ticks: Number(f[11]) + Number(f[12]), pssKb: pss ? Number(pss[1]) : 0 };
  } catch {
    return undefined; // gone
  }
}

/** What a host used over a window: CPU ticks of every process of its tree seen, the largest PSS sum. */
class HostUsage {
  private readonly firstTicks = new Map<number, number>();
  private readonly lastTicks = new Map<number, number>();
  peakPssKb = 0;
  peakProcesses = 0;

  constructor(private readonly root: number) {}

  sample(first: boolean): void {
    let pss = 0;
    let processes = 0;
    for (const pid of [this.root, ...descendantsOf(this.root).map((p) => p.pid)]) {
      const s = statOf(pid);
      if (!s) continue;
      // A process born during the window counts from 0; one alive at its start, from then.
      if (!this.firstTicks.has(pid)) this.firstTicks.set(pid, first ? s.ticks : 0);
      this.lastTicks.set(pid, s.ticks);
      pss += s.pssKb;
      processes++;
    }
    this.peakPssKb = Math.max(this.peakPssKb, pss);
    this.peakProcesses = Math.max(this.peakProcesses, processes);
  }

  get ticks(): number {
    let total = 0;
    for (const [pid, last] of this.lastTicks) total += last - this.firstTicks.get(pid)!;
    return total;
  }
}

/**
 * The shape's processes this drill started that have no handle with a pid: PostgreSQL, HAProxy, moto, the UI;
 * found by their directory under the shape's `dataDir` (the test stack's own PostgreSQL is another descendant)
 * or, for the store, its address.
 */
export function otherRoots(dataDir: string, storeHost: string): HostRoot[] {
  // moto's command line names its address, not its directory (env execs python).
  const mine = descendantsOf(process.pid).filter(
    (p) => p.command.includes(dataDir) || p.command.includes(`moto.server -H ${storeHost} `),
  );
  const pick = (name: string, test: RegExp): HostRoot[] => {
    const found = mine.find((p) => test.test(p.command));
    return found ? [{ name, pid: found.pid }] : [];
  };
  return [
    ...pick('postgres', /\/postgres\b.* -D /),
    ...pick('haproxy', /haproxy .*-f /),
    ...pick('moto (S3)', /moto\.server/),
    ...pick('temporal-ui', /ui-server/),
  ];
}

/** How often the trees are sampled: a run's processes live for seconds, so each is seen. */
const SAMPLE_EVERY_MS = 500;

/**
 * Measures every host over `windowMs` of load: CPU as % of one core (each process of its tree sampled every
 * 500 ms), and the peak of its memory (PSS, MiB) and of its processes.
 */
export async function measureHosts(roots: HostRoot[], windowMs: number): Promise<string[]> {
  const usage = roots.map((r) => new HostUsage(r.pid));
  const started = Date.now();
  usage.forEach((u) => u.sample(true));
  while (Date.now() - started < windowMs) {
    await sleep(SAMPLE_EVERY_MS);
    usage.forEach((u) => u.sample(false));
  }
  const seconds = (Date.now() - started) / 1000;
  return roots.map((r, i) => {
    const cpu = (100 * usage[i].ticks) / CLK_TCK / seconds;
    const mib = usage[i].peakPssKb / 1024;
    return `${r.name}: CPU ${cpu.toFixed(0)}% of a core, memory (PSS) ${mib.toFixed(0)} MiB at most, ${usage[i].peakProcesses} processes at most`;
  });
}

/**
 * Every resource's workflow is listed by the cluster's visibility (a query by kind) with its id, kind and
 * organization as search attributes. Visibility lags its writes: polled for up to `timeoutMs`.
 */
export async function checkVisibility(
  f: Findings,
  client: Client,
  expected: Array<{ kind: ResourceKind; id: string; organizationId: string }>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let missing: string[] = [];
  let wrong: string[] = [];
  for (;;) {
    const listed = new Map<string, Record<string, unknown>>();
    for (const kind of new Set(expected.map((e) => e.kind)))
      for await (const wf of client.workflow.list({ query: `${RESOURCE_KIND.name}="${kind}"` }))
        listed.set(wf.workflowId, {
          id: wf.typedSearchAttributes.get(RESOURCE_ID),
          kind: wf.typedSearchAttributes.get(RESOURCE_KIND),
          org: wf.typedSearchAttributes.get(ORGANIZATION_ID),
        });
    missing = [];
    wrong = [];
    for (const e of expected) {
      const got = listed.get(`${e.kind}-${e.id}`);
      if (!got) missing.push(`${e.kind}-${e.id}`);
      else if (got.id !== e.id || got.kind !== e.kind || got.org !== e.organizationId)
        wrong.push(`${e.kind}-${e.id}: ${JSON.stringify(got)}`);
    }
    if ((!missing.length && !wrong.length) || Date.now() > deadline) break;
    await sleep(1000);
  }
  f.checked += expected.length;
  f.missing(missing.length, `workflows in the cluster's visibility (${missing.slice(0, 5).join(', ')})`);
  if (wrong.length) f.violation(`workflows with wrong search attributes: ${wrong.slice(0, 5).join('; ')}`);
  f.count('workflows listed in visibility', expected.length - missing.length);
}

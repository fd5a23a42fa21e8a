// What the cluster drill (cluster.ts) measures and audits besides checkRuns: CPU and memory of each host of the
// production shape under the load (from /proc: a host's process with everything under it, e.g. a worker with
// its runs' sandboxes), and that every workflow of the drill is listed in the cluster's visibility with the
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

/** A host's CPU ticks (its live processes' own and their reaped children's) and resident memory, now. */
interface Sample {
  ticks: number;
  rssKb: number;
  processes: number;
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function statOf(pid: number): { ticks: number; rssKb: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces), from field 3: utime is 14, stime 15, cutime 16, cstime 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    const rss = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m);
    return { ticks, rssKb: rss ? Number(rss[1]) : 0 };
  } catch {
    return undefined; // gone
  }
}

function sampleTree(root: number): Sample {
  const pids = [root, ...descendantsOf(root).map((p) => p.pid)];
  const out: Sample = { ticks: 0, rssKb: 0, processes: 0 };
  for (const pid of pids) {
    const s = statOf(pid);
    if (!s) continue;
    out.ticks += s.ticks;
    out.rssKb += s.rssKb;
    out.processes++;
  }
  return out;
}

/** The shape's processes this drill started that have no handle with a pid: PostgreSQL, HAProxy, moto, the UI. */
export function otherRoots(): HostRoot[] {
  const mine = descendantsOf(process.pid);
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

/** Measures every host over `windowMs` of load: CPU as % of one core, RSS at the end (MiB), processes. */
export async function measureHosts(roots: HostRoot[], windowMs: number): Promise<string[]> {
  const before = roots.map((r) => sampleTree(r.pid));
  const started = Date.now();
  await sleep(windowMs);
  const seconds = (Date.now() - started) / 1000;
  const after = roots.map((r) => sampleTree(r.pid));
  return roots.map((r, i) => {
    const cpu = (100 * (after[i].ticks - before[i].ticks)) / CLK_TCK / seconds;
    const mib = after[i].rssKb / 1024;
    return `${r.name}: CPU ${cpu.toFixed(0)}% of a core, RSS ${mib.toFixed(0)} MiB (${after[i].processes} processes)`;
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

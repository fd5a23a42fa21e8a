// `node dist/bench/profile-top.js <file.cpuprofile | file.heapprofile | directory> [top]`: where the CPU time of
// a profile written by `node --cpu-prof` (or the bench's --profile-dir) went. Prints, per profile (one per
// thread), the busy time, the functions with the most self time, and self time by area (our code by directory,
// each npm package, node internals, GC). A sampling heap profile (--profile-dir's .heapprofile): the bytes
// allocated by function and by area, module loading apart (what the garbage collector has to clear).
import fs from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Which part of the program a frame belongs to. */
function areaOf(f: CallFrame): string {
  if (!f.url) return f.functionName.startsWith('(') ? f.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (pkg) return pkg[1];
  if (f.url.startsWith('node:')) return 'node internals';
  const ours = /\/dist\/((?:src\/[^/]+|[^/]+))/.exec(f.url);
  if (ours) return `tarmac ${ours[1]}`;
  return path.basename(f.url);
}

function frameName(f: CallFrame): string {
  const where = f.url
    ? `${f.url.replace(/^.*\/(node_modules|dist)\//, '$1/').replace(/^file:\/\//, '')}:${f.lineNumber + 1}`
    : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
}

function summarizeProfile(file: string, top: number): string | undefined {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  /** Inclusive time of our own functions (dist/, not node_modules): which of our steps the CPU is spent under. */
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  let idle = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    total += dt;
    if (node.callFrame.functionName === '(idle)') {
      idle += dt;
      return;
    }
    const name = frameName(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + dt);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      if (!f.url.includes('/dist/') || f.url.includes('node_modules') || f.url.includes('/dist/bench/')) continue;
      const key = frameName(f);
      if (seen.has(key)) continue; // recursion counts once
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  });
  const busy = total - idle;
  if (busy < 50_000) return undefined; // under 50 ms of CPU: a thread that did nothing worth reading
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${ms(v)} ms ${pct(v)}  ${k}`);
  return [
    `\n=== ${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`,
    `-- self time by area`,
    ...rows(areas, 12),
    `-- top ${top} functions by self time`,
    ...rows(self, top),
    `-- our functions by inclusive time (the CPU spent in them and what they call)`,
    ...rows(inclusive, top),
  ].join('\n');
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children?: HeapNode[];
}

function summarizeHeapProfile(file: string, top: number): string {
  const { head } = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: HeapNode };
  const self = new Map<string, number>();
  /** By the area of the nearest frame outside node's own code: who asked node for what it allocated. */
  const areas = new Map<string, number>();
  let loading = 0;
  let total = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const walk = (node: HeapNode, owner: string, inLoading: boolean) => {
    const f = node.callFrame;
    const loads = inLoading || /^(Module\._load|wrapSafe|compileFunction)$/.test(f.functionName);
    const area = f.url && !f.url.startsWith('node:') ? areaOf(f) : owner;
    if (loads) loading += node.selfSize;
    else {
      total += node.selfSize;
      add(self, frameName(f), node.selfSize);
      add(areas, area, node.selfSize);
    }
    for (const c of node.children ?? []) walk(c, area, loads);
  };
  walk(head, 'node internals', false);
  const mb = (b: number) => (b / 1e6).toFixed(1).padStart(7);
  const rows = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${mb(v)} MB ${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  return [
    `\n=== ${path.basename(file)}: ${mb(total)} MB allocated (sampled), module loading apart (${mb(loading)} MB)`,
    `-- by area (the nearest frame outside node's own code)`,
    ...rows(areas, 15),
    `-- top ${top} functions by bytes allocated`,
    ...rows(self, top),
  ].join('\n');
}

function main(): void {
  const [target, topArg] = process.argv.slice(2);
  if (!target) {
    console.error('usage: node dist/bench/profile-top.js <file.cpuprofile | file.heapprofile | directory> [top=25]');
    process.exit(2);
  }
  const files = fs.statSync(target).isDirectory()
    ? fs
        .readdirSync(target)
        .filter((f) => f.endsWith('.cpuprofile') || f.endsWith('.heapprofile'))
        .sort()
        .map((f) => path.join(target, f))
    : [target];
  for (const f of files) {
    const top = Number(topArg) || 25;
    const out = f.endsWith('.heapprofile') ? summarizeHeapProfile(f, top) : summarizeProfile(f, top);
    if (out) console.log(out);
  }
}

main();

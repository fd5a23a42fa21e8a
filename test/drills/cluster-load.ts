// The load of the cluster drill (cluster.ts), all of it through the production shape's load balancer with its
// bootstrap key, as any client would: a structure (the drill program) and a function deployed from a bucket,
// structure runs created at a steady pace with Idempotency-Keys (a create answered 502/503/504 or unanswered
// during a fault is retried with its key, so it never makes two runs), function executes, and probes (a short
// run that must succeed) that say when the platform serves again after a fault.
import { randomUUID } from 'node:crypto';
import { config, entriesOf, makeArchive } from '../fixtures/projects';
import { sleep } from './kit';
import { DRILL_PROGRAM } from './run-checks';

export interface Answer {
  status: number;
  body: any;
  text: string;
}

/** One HTTP call as `key` to `baseUrl`, with a deadline; rejects only when nothing answered. */
export function clusterCaller(baseUrl: string, key: string) {
  return async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(`${baseUrl}${p}`, {
      method,
      signal: AbortSignal.timeout(30_000),
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const json = res.headers.get('content-type')?.includes('json') && text ? JSON.parse(text) : undefined;
    return { status: res.status, body: json, text };
  };
}
export type Caller = ReturnType<typeof clusterCaller>;

const FUNCTION_PY = 'def handler(event):\n    return {"echo": event["body"]}\n';

/** Uploads the two projects to a bucket, creates the structure and the function, waits for both builds. */
export async function deployProjects(call: Caller): Promise<{ structureId: string; functionId: string }> {
  const bucket = await call('POST', '/api/buckets', { name: 'cluster-drill' });
  if (bucket.status !== 201) throw new Error(`creating a bucket answered ${bucket.status} ${bucket.text}`);
  const bucketId = bucket.body.bucket_id as string;
  const projects = {
    'structure.zip': {
      'structure_config.yaml': config('python3', '  main_file: structure.py\n'),
      'structure.py': DRILL_PROGRAM,
    },
    'function.zip': {
      'function_config.yaml': config('python3', '  main_file: function.py\n  handler: handler\n'),
      'function.py': FUNCTION_PY,
    },
  };
  for (const [name, files] of Object.entries(projects)) {
    const url = await call('POST', `/api/buckets/${bucketId}/asset-urls/${name}`, { operation: 'PUT' });
    if (url.status !== 200) throw new Error(`an upload URL answered ${url.status} ${url.text}`);
    const put = await fetch(url.body.url, {
      method: 'PUT',
      body: makeArchive('zip', entriesOf(files)),
      headers: url.body.headers,
    });
    if (put.status !== 200) throw new Error(`uploading ${name} answered ${put.status} ${await put.text()}`);
  }
  const create = async (route: string, asset: string) => {
    const res = await call('POST', route, {
      name: `cluster drill ${asset}`,
      code: { data_lake: { bucket_id: bucketId, asset_path: asset } },
    });
    if (res.status !== 201) throw new Error(`POST ${route} answered ${res.status} ${res.text}`);
    return res.body;
  };
  const structure = await create('/api/structures', 'structure.zip');
  const fn = await create('/api/functions', 'function.zip');
  for (const deploymentId of [structure.latest_deployment_id, fn.latest_deployment_id]) {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const d = await call('GET', `/api/deployments/${deploymentId}`);
      if (d.body?.status === 'SUCCEEDED') break;
      if (['FAILED', 'ERROR'].includes(d.body?.status))
        throw new Error(`deployment ${deploymentId} ended ${d.body.status}: ${JSON.stringify(d.body.status_detail)}`);
      if (Date.now() > deadline) throw new Error(`deployment ${deploymentId} still ${d.body?.status} after 300 s`);
      await sleep(500);
    }
  }
  return { structureId: structure.structure_id, functionId: fn.function_id };
}

/** Answers a fault may bring, after which the same request (with its key) is sent again. */
const RETRIED = [502, 503, 504];

export class ClusterLoad {
  /** Run ids by Idempotency-Key: every key that got a 201 (or its replay, 200). */
  readonly runs = new Map<string, string>();
  readonly functionResults = { ok: 0, endedOtherwise: 0, wrong: 0, unfinished: 0 };
  /** Answers that were retried, by status ('none': nothing answered). */
  readonly retried: Record<string, number> = {};
  /** Creates and executes that failed for good (a finding each). */
  readonly errors: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly call: Caller,
    private readonly project: { structureId: string; functionId: string },
    private readonly witnessUrl: string,
  ) {}

  get runIds(): string[] {
    return [...new Set(this.runs.values())];
  }

  /** Creates a run of the drill program (argv: lines seconds events), retrying with its key; its run id. */
  async createRun(args: string[], deadlineMs = 180_000): Promise<string> {
    const key = randomUUID();
    const deadline = Date.now() + deadlineMs;
    const body = { args, env_vars: [{ name: 'DRILL_WITNESS', value: this.witnessUrl }] };
    for (;;) {
      const res = await this.call('POST', `/api/structures/${this.project.structureId}/runs`, body, {
        'idempotency-key': key,
      }).catch(() => undefined);
      if (res && (res.status === 201 || res.status === 200)) {
        const known = this.runs.get(key);
        if (known && known !== res.body.structure_run_id)
          throw new Error(`Idempotency-Key ${key} answered run ${res.body.structure_run_id} after ${known}`);
        this.runs.set(key, res.body.structure_run_id);
        return res.body.structure_run_id;
      }
      if (res && !RETRIED.includes(res.status)) throw new Error(`creating a run answered ${res.status} ${res.text}`);
      const why = res ? String(res.status) : 'none';
      this.retried[why] = (this.retried[why] ?? 0) + 1;
      if (Date.now() > deadline) throw new Error(`no run created within ${deadlineMs} ms (last answer ${why})`);
      await sleep(250);
    }
  }

  /** One execute of the function, retried with its key until it answers the handler's result or ends otherwise. */
  async execute(n: number, deadlineMs = 120_000): Promise<void> {
    const key = randomUUID();
    const deadline = Date.now() + deadlineMs;
    while (Date.now() < deadline) {
      const res = await this.call(
        'POST',
        `/api/functions/${this.project.functionId}/execute`,
        { n },
        {
          'idempotency-key': key,
        },
      ).catch(() => undefined);
      if (res?.status === 200) {
        if (res.body?.echo?.n === n) this.functionResults.ok++;
        else this.functionResults.wrong++;
        return;
      }
      if (res?.status === 502 && res.body?.type === 'FunctionExecutionError') {
        this.functionResults.endedOtherwise++;
        return;
      }
      if (res && res.status !== 202 && !RETRIED.includes(res.status))
        throw new Error(`executing the function answered ${res.status} ${res.text}`);
      await sleep(500);
    }
    this.functionResults.unfinished++;
  }

  /** A run created now that must end SUCCEEDED: answers ms from now to its end (or throws past `timeoutMs`). */
  async probe(timeoutMs: number): Promise<number> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    for (;;) {
      const id = await this.createRun(['1', '0', '0'], timeoutMs);
      for (;;) {
        const run = await this.call('GET', `/api/structure-runs/${id}`).catch(() => undefined);
        if (run?.body?.status === 'SUCCEEDED') return Date.now() - started;
        if (['FAILED', 'ERROR', 'CANCELLED'].includes(run?.body?.status)) break; // try another (audited later)
        if (Date.now() > deadline) throw new Error(`no probe run succeeded within ${timeoutMs} ms`);
        await sleep(250);
      }
    }
  }

  /** Starts the steady load: a run of `runSeconds` every `everyMs`, an execute every other time. */
  start(opts: { everyMs: number; runSeconds: number; lines: number; events: number }): void {
    this.running = true;
    const args = [String(opts.lines), String(opts.runSeconds), String(opts.events)];
    let n = 0;
    const loop = async () => {
      while (this.running) {
        const i = n++;
        this.loops.push(this.createRun(args).then(() => undefined, this.failed));
        if (i % 2 === 0) this.loops.push(this.execute(i).catch(this.failed));
        await sleep(opts.everyMs);
      }
    };
    this.loops.push(loop());
  }

  private readonly failed = (err: Error) => void this.errors.push(err.message);

  /** Stops creating; waits for every create and execute in flight to be answered. */
  async stop(): Promise<void> {
    this.running = false;
    for (let i = 0; i < this.loops.length; i++) await this.loops[i];
  }
}

// One trace per run: an api process and a worker process, both exporting to our OTLP collector double, serve a
// created run; the request, the workflow start, the workflow, its activities and the user process's
// TRACEPARENT share one trace id, which the api's log line of the request carries. The same worker serves /metrics with the Temporal SDK's metrics forwarded.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { expect } from 'chai';
import { WORKFLOW_TRACING_MODULES } from '../../src/observability/temporal-tracing';
import { WORKFLOWS_PATH } from '../../src/worker/create-worker';
import { Findings, until } from '../drills/kit';
import { Processes, processEnv, startApiProcess } from '../drills/processes';
import { structureWithBuild } from '../harness/builds';
import { as } from '../harness/client';
import { startOtlpCollector, type ReceivedSpan } from '../support/otlp-collector';
import { waitForRun } from '../harness/runs';
import { freePort, getStack, newTenant } from '../harness/stack';

describe('traces and worker metrics (OTLP to a collector double)', function () {
  this.timeout(180_000);
  const procs = new Processes();
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;
  let api: Awaited<ReturnType<typeof startApiProcess>>;
  let workerMetricsUrl: string;

  before(async () => {
    collector = await startOtlpCollector();
    const { config } = getStack();
    // A bundle with the workflow interceptors, as `npm run worker` bundles them when tracing is on.
    const bundle = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: WORKFLOW_TRACING_MODULES,
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    const bundleFile = path.join(config.dataDir, 'traced-workflow-bundle.js');
    fs.writeFileSync(bundleFile, bundle.code);
    // A task queue of their own: only this worker takes these runs.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, TEMPORAL_TASK_QUEUE: `traced-${randomUUID()}` };
    api = await startApiProcess(procs, 'traced-api', { ...env, LOG_LEVEL: 'debug' }); // its request log lines
    const metricsPort = await freePort();
    workerMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const worker = procs.spawn(
      'traced-worker',
      process.execPath,
      [path.join(__dirname, '..', 'drills', 'worker-process.js'), bundleFile],
      processEnv({
        ...env,
        PUBLIC_BASE_URL: api.baseUrl,
        WORKER_METRICS_PORT: String(metricsPort),
        METRICS_TOKEN: 'worker-scrape',
      }),
    );
    await procs.waitForLine(worker, /^ready$/m);
  });
  after(async () => {
    const f = new Findings('tracing', 'none');
    await procs.stopAll(f);
    await collector?.close();
    expect(f.violations).to.deep.equal([]);
  });

  it('links the request, the workflow, its activities and the user process in one trace with the run id', async () => {
    const t = await newTenant('traced');
    const s = await structureWithBuild(t.organizationId, {
      files: { 'structure.py': 'import os\nprint("traceparent " + os.environ.get("TRACEPARENT", "none"))\n' },
    });
    const created = await as(t.key, api.baseUrl).post(`/api/structures/${s.structureId}/runs`, { args: [] });
    expect(created.status, created.text).to.equal(201);
    const runId: string = created.body.structure_run_id;
    const run = await waitForRun(t.key, runId, undefined, 60_000, api.baseUrl);
    expect(run.status).to.equal('SUCCEEDED');

    const requestSpan = await until('the request span', 30_000, async () =>
      collector.spans.find((x) => x.attributes['tarmac.run_id'] === runId && x.service === 'tarmac-api'),
    );
    expect(requestSpan.name).to.equal('POST /api/structures/:structure_id/runs');
    expect(requestSpan.attributes['tarmac.organization_id']).to.equal(t.organizationId);
    // The api's log line of that request carries the trace id.
    const logLine = JSON.parse(api.child.find(`"path":"/api/structures/${s.structureId}/runs"`)!);
    expect(logLine).to.include({ msg: 'request', trace_id: requestSpan.traceId });
    const inTrace = (name: RegExp) => (x: ReceivedSpan) => x.traceId === requestSpan.traceId && name.test(x.name);
    const spans = await until('the workflow and activity spans', 30_000, async () => {
      const found = [/^StartWorkflow:/, /^RunWorkflow:/, /^StartActivity:/, /^RunActivity:executeCodeRun$/].map(
        (name) => collector.spans.find(inTrace(name)),
      );
      return found.every(Boolean) ? (found as ReceivedSpan[]) : undefined;
    });
    const [, workflow, , activity] = spans;
    expect(workflow.service).to.equal('tarmac-worker');
    expect(activity.service).to.equal('tarmac-worker');
    expect(activity.attributes['tarmac.run_id']).to.equal(runId);

    // The program's TRACEPARENT: this trace, with the executing activity's span as the parent.
    const logs: string[] = (await as(t.key, api.baseUrl).get(`/api/structure-runs/${runId}/logs`)).body.logs;
    const traceparent = logs.find((l) => l.startsWith('traceparent '))!.split(' ')[1];
    expect(traceparent).to.equal(`00-${requestSpan.traceId}-${activity.spanId}-01`);
  });

  it("serves the worker's /metrics with the token: runs ended, the pool, and the Temporal SDK's own metrics", async () => {
    expect((await fetch(workerMetricsUrl)).status).to.equal(401);
    const text = await until('the SDK metrics', 30_000, async () => {
      const res = await fetch(workerMetricsUrl, { headers: { authorization: 'Bearer worker-scrape' } });
      expect(res.status).to.equal(200);
      const body = await res.text();
      return body.includes('temporal_') ? body : undefined;
    });
    expect(text).to.match(/^tarmac_jobs_ended_total\{kind="structure-run",status="SUCCEEDED"\} [1-9]/m);
    expect(text).to.match(/^tarmac_run_queue_to_start_seconds_count\{kind="structure-run"\} [1-9]/m);
    expect(text).to.match(/^tarmac_db_pool_connections\{state="total"\} \d+/m);
    expect(text).to.match(/^temporal_\w+/m);
  });
});

// Schema fuzzing: schemathesis generates requests from our own OpenAPI document (valid ones and invalid
// ones, single calls and stateful sequences following the document's links) and checks every answer
// against it: no 5xx, declared statuses, content types and headers, response schemas (SSE events too),
// invalid input refused, valid input accepted, 405 with Allow for undeclared methods. It runs against the
// shared test stack, in an organization of its own so that it cannot disturb the other test files.
// The stack's model provider answers every model meanwhile: which models exist is the provider's business
// (an unknown one is its 4xx, which chat messages pass on as a 400), not something our document can promise;
// so does the code host with authorization codes (CreateConnection).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { pythonVenv } from '../harness/python-venv';
import type { ScriptedReply } from '../harness/model-provider';
import { getStack, newTenant } from '../harness/stack';

const SCHEMATHESIS = 'schemathesis==4.32.*';
/** Fixed: a failure found once is found again by the next run. */
const SEED = 18;
/**
 * Cases per operation in the fuzzing phase (and scenarios in the stateful one). At 5, on 2 cores: the whole run
 * (211 operations, about 16,000 cases) took 212 s in a clean clone's `.ci/run`; fuzzing alone 310 s and stateful
 * 26 s at load 15-25. At 20, fuzzing did not end within 15 minutes. FUZZ_MAX_EXAMPLES for a deeper run.
 */
const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 5);
/** FUZZ_PHASES narrows a run by hand (e.g. `fuzzing` alone to time it). */
const PHASES = process.env.FUZZ_PHASES ?? 'examples,coverage,fuzzing,stateful';
/** A hard stop for a run that hangs (the mocha timeout is above it, so the report is still printed). */
const KILL_AFTER_MS = 20 * 60_000;

/**
 * Not fuzzed, because they would only break or stall the run itself: the fuzzer's own key could be deactivated
 * or deleted (every later request then answers 401; test/api/accounts.test.ts covers both), and a stream that
 * never ends.
 */
const EXCLUDED_OPERATIONS = [
  'UpdateApiKey',
  'DeleteApiKey',
  // An organization's stream of run changes stays open by design (each call would wait out the request timeout);
  // test/api/hardening.test.ts checks its frames against the document, test/api/run-changes.test.ts its behaviour.
  'GetRunChangesSSE',
];

describe('schema fuzzing (schemathesis)', function () {
  this.timeout(KILL_AFTER_MS + 5 * 60_000);

  it('finds no server error and no answer that contradicts the OpenAPI document', async () => {
    const python = await pythonVenv('schemathesis', [SCHEMATHESIS]);
    const tenant = await newTenant('fuzz');
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-fuzz-'));
    const args = [
      '-m',
      'schemathesis.cli',
      'run',
      `${getStack().baseUrl}/api/openapi.json`,
      '--header',
      `Authorization: Bearer ${tenant.key}`,
      '--checks',
      'all',
      '--mode',
      'all',
      '--phases',
      PHASES,
      '--seed',
      String(SEED),
      '--max-examples',
      String(MAX_EXAMPLES),
      '--generation-database',
      'none',
      // One worker: hypothesis' lambda-source cache is not thread-safe (several workers end in internal errors).
      '--workers',
      '1',
      '--request-timeout',
      '90',
      // Executing a function or a tool activity waits for its run (up to its wait limit) by design; a queue the
      // fuzzer paused makes it wait the whole way. Its deadline is the request timeout's, not the default 10 s.
      '--max-response-time',
      '90',
      // Rules JSON Schema cannot state are refused with a 400/422 naming them, so a schema-valid request may
      // rightly be refused: an IANA time zone, max_interval not below initial_interval, a function schedule's
      // input (not args), a calendar date, an Idempotency-Key repeated with another body. The API tests check
      // each of them; every other check runs.
      '--exclude-checks',
      'positive_data_acceptance',
      '--no-color',
      '--output-truncate',
      'false',
      // The chat request (messages of contents of artifacts, each open to more JSON) draws slowly enough for
      // hypothesis to complain; the cases it draws are still sent and checked.
      '--suppress-health-check',
      'filter_too_much',
      ...EXCLUDED_OPERATIONS.flatMap((id) => ['--exclude-operation-id', id]),
    ];
    const anyModel: ScriptedReply = { text: 'An answer to the fuzzer.', times: Infinity };
    getStack().modelProvider.script(anyModel);
    // Likewise the code host takes every authorization code: whether a code is good is the code host's business
    // (a refused one is its 400, which CreateConnection passes on).
    getStack().codehost.acceptAnyCode = true;
    const started = Date.now();
    let result: { code: number | null; output: string };
    try {
      result = await runProcess(python, args, work);
    } finally {
      await deleteSchedulesOf(tenant.organizationId);
      getStack().modelProvider.withdraw(anyModel);
      getStack().codehost.acceptAnyCode = false;
      fs.rmSync(work, { recursive: true, force: true });
    }
    const { code, output } = result;
    console.log(`      schemathesis: ${summaryOf(output)} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    expect(code, `schemathesis exited ${code}; its report:\n${output}`).to.equal(0);
  });
});

/**
 * The schedules the fuzzer made (of runs, knowledge bases, data connectors) would go on firing through the
 * later test files; they go with it. Found by the organization's search attribute, as the Temporal UI finds them.
 */
async function deleteSchedulesOf(organizationId: string): Promise<void> {
  const client = getStack().env.client;
  for await (const s of client.schedule.list({ query: `TarmacOrganizationId = '${organizationId}'` })) {
    await client.schedule
      .getHandle(s.scheduleId)
      .delete()
      .catch(() => undefined); // already gone (the fuzzer deleted it meanwhile)
  }
}

function runProcess(file: string, args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '160' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    // FUZZ_LOG=<file>: the report as it is written, to follow a long run.
    const log = process.env.FUZZ_LOG ? fs.createWriteStream(process.env.FUZZ_LOG) : undefined;
    const take = (d: Buffer) => {
      output += d;
      log?.write(d);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      output += `\n(killed after ${KILL_AFTER_MS / 1000} s)\n`;
      child.kill('SIGKILL');
    }, KILL_AFTER_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      log?.end();
      resolve({ code, output });
    });
  });
}

/**
 * One line from the SUMMARY section schemathesis prints last: operations tested, cases generated, and
 * warnings. Its own closing rule (`=== 2 warnings in 160.98s ===`) reads like a pytest summary line, so it is
 * never echoed: CI reads the test count from the runner's summary, and that line must be mocha's.
 */
function summaryOf(output: string): string {
  const tested = /Tested:\s*(\d+)/.exec(output)?.[1] ?? '?';
  const cases = /(\d+) generated/.exec(output)?.[1] ?? '?';
  const warnings = output.match(/^\s*⚠️/gm)?.length ?? 0;
  return `${tested} operations, ${cases} generated cases, ${warnings} kinds of warning`;
}

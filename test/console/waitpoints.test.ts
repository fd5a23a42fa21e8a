// The console's "Waiting for you" page in a real browser (browser.ts) against the real stack (docs/waitpoints.md):
// an assistant's call of a tool that requires approval waits; the run's page says so live; the call is listed
// with its arguments, approved with edited ones, and the run goes on to its answer.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { as } from '../harness/client';
import { structureWithBuild } from '../harness/builds';
import { CALCULATOR_TOOL, waitForAssistantRun } from '../harness/runs';
import { getStack, newTenant } from '../harness/stack';
import { signedInConsole, type ConsoleBrowser } from './browser';

describe('console (browser): waiting for approval', function () {
  this.timeout(180_000);
  let c: ConsoleBrowser;
  let page: Page;
  let tenant: Awaited<ReturnType<typeof newTenant>>;

  before(async () => {
    tenant = await newTenant('console-waitpoints');
    c = await signedInConsole(tenant.key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  it('lists a call waiting for approval, shows the wait on its run, and approves it with edited arguments', async () => {
    const { modelProvider: provider } = getStack();
    const api = as(tenant.key);
    const tool = await structureWithBuild(tenant.organizationId, {
      kind: 'tool',
      files: { 'tool.py': CALCULATOR_TOOL },
      mainFile: 'tool.py',
      name: 'calc',
    });
    await api.patch(`/api/tools/${tool.structureId}`, { requires_approval: true });
    const assistant = await api.post('/api/assistants', { name: 'Careful', tool_ids: [tool.structureId] });
    const model = provider.uniqueModel();
    provider.script(
      { model, toolCalls: [{ id: 'call_1', name: 'Calculator_divide', arguments: '{"a": 10, "b": 4}' }] },
      { model, respond: (body) => ({ text: `Result: ${body.messages.at(-1)!.content}` }) },
    );
    const created = await api.post(`/api/assistants/${assistant.body.assistant_id}/runs`, {
      input: 'What is 10/4?',
      model: `local/${model}`,
    });
    const runId = created.body.assistant_run_id;

    await c.open(`/runs/assistant/${runId}`);
    await page.getByRole('status').getByText('Waiting for approval of Calculator_divide').waitFor({ timeout: 60_000 });
    await c.shot('30-run-waiting-for-approval');
    await page.getByRole('link', { name: 'approve or reject it' }).click();
    await page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
    const call = page.getByRole('region', { name: 'Calculator_divide (tool calc)' });
    await call.waitFor();
    const args = call.getByLabel('Arguments of the call');
    expect(JSON.parse(await args.inputValue())).to.deep.equal({ a: 10, b: 4 });
    await args.fill('{"a": 9, "b": 3}');
    await c.accessible('waitpoints');
    await c.shot('31-waiting-for-you');
    await call.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Nothing waits for approval.').waitFor({ timeout: 30_000 });

    const run = await waitForAssistantRun(tenant.key, runId);
    expect(run.status).to.equal('SUCCEEDED');
    expect(run.output.value).to.equal('Result: 3.0');
  });
});

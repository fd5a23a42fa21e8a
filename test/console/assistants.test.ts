// The console's assistants page in a real browser (browser.ts) against the real stack: create an assistant,
// chat with it in a new thread and see the answer stream in while its run goes on (the stack's model
// provider double scripts the answers, a chunk every few hundred ms), then go on in the same thread.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { getStack, newTenant } from '../harness/stack';
import { signedInConsole, type ConsoleBrowser } from './browser';

const ANSWER = 'Paris is the capital of France and lies on the Seine.';

describe('console (browser): assistants and threads', function () {
  this.timeout(120_000);
  let c: ConsoleBrowser;
  let page: Page;

  before(async () => {
    c = await signedInConsole((await newTenant('console-chat')).key);
    page = c.page;
  });
  after(async () => {
    await c?.close();
  });

  it('chats with an assistant: the answer streams in, joins a new thread, and the thread goes on', async () => {
    const provider = getStack().modelProvider;
    const model = provider.uniqueModel();
    provider.script(
      { model, text: ANSWER, chunkDelayMs: 250 },
      {
        model,
        respond: (body) => ({
          text: `You said ${body.messages.filter((m) => m.role !== 'system').length} things so far.`,
        }),
      },
    );

    await page.getByRole('link', { name: 'Assistants', exact: true }).click();
    await page.getByLabel('Name').fill('Geographer');
    await page.getByLabel('Instructions (optional)').fill('Answer in one sentence.');
    await page.getByRole('button', { name: 'Create assistant' }).click();
    await page.getByRole('heading', { name: 'Geographer' }).waitFor();
    await c.accessible('assistant');

    await page.getByLabel('Message').fill('What is the capital of France?');
    await page.getByLabel(/^Model/).fill(`local/${model}`);
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.getByLabel('Answer');
    // Seen in part while the run goes on: the first words, not yet the last, with the exchange still running.
    await answer.getByText(/^Paris is/).waitFor({ timeout: 30_000 });
    const partial = (await answer.textContent())!;
    expect(partial.length).to.be.below(ANSWER.length);
    expect(await page.locator('.exchange [data-status="RUNNING"]').count()).to.equal(1);
    await c.shot('14-assistant-streaming');

    // Once the run has ended, the exchange is the thread's: read from GET /api/threads/{id}/messages.
    const conversation = page.getByRole('list', { name: 'Conversation' });
    await conversation.locator('.said.assistant', { hasText: ANSWER }).waitFor({ timeout: 30_000 });
    await page.getByRole('heading', { name: 'Chat', exact: true }).waitFor();
    await page.getByRole('button', { name: /\(1 messages\)/ }).waitFor();
    expect(provider.requestsFor(model)[0].body.stream).to.equal(true);

    await page.getByLabel('Message').fill('And of Italy?');
    await page.getByRole('button', { name: 'Send' }).click();
    await conversation.getByText('You said 3 things so far.').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: /\(2 messages\)/ }).waitFor({ timeout: 10_000 });
    const second = await provider.waitForRequest(model, 2);
    expect(second.body.messages.filter((m: any) => m.role !== 'system').map((m: any) => m.content)).to.deep.equal([
      'What is the capital of France?',
      ANSWER,
      'And of Italy?',
    ]);
    await c.accessible('assistant-chat');
    await c.shot('15-assistant-thread');
  });
});

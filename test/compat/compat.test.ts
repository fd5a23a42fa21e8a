// The compat suite: pytest cases (test/compat/*.py) that drive the real Python clients, pinned in
// requirements.txt (griptape's cloud drivers, the generated griptape-cloud-client), against this stack. The
// venv is cached outside the repository (test/harness/python-venv.ts); a machine without python3 fails here.
// The clients' model calls reach the stack's local provider, scripted by `scriptedAgent` below.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { ChatRequestBody, ScriptedAnswer } from '../harness/model-provider';
import { pythonVenv } from '../harness/python-venv';
import { getStack, newTenant } from '../harness/stack';

const HERE = path.resolve(__dirname, '../../../test/compat');

const textOf = (message: Record<string, any>): string =>
  typeof message.content === 'string'
    ? message.content
    : Array.isArray(message.content)
      ? message.content.map((p: any) => p.text ?? '').join('')
      : '';

/**
 * A deterministic model the Python side steers with its prompt: after a tool result it answers
 * `tool said: <result>`; `call <function> <json arguments>` calls that function when it is offered; `stall`
 * is never answered (the client's request stays open until it goes away); anything else is answered with
 * JSON naming what reached the model (`system`: the system messages, `history`: the earlier turns, `input`;
 * `parts`: the types of the last message's content parts, when it has parts), so that the tests can check which
 * rules, memory and images a client sent. `report usage <prompt tokens> <completion tokens>` is answered with that
 * usage (what the provider says it counted), so that a test knows the tokens the model reported.
 */
function scriptedAgent(body: ChatRequestBody): ScriptedAnswer {
  const last = body.messages[body.messages.length - 1];
  if (last.role === 'tool') return { text: `tool said: ${textOf(last)}` };
  const input = textOf(last);
  if (input.trim() === 'stall') return { stallBeforeAnswer: true };
  const usage = /^report usage (\d+) (\d+)$/.exec(input.trim());
  if (usage)
    return { text: 'counted', usage: { prompt_tokens: Number(usage[1]), completion_tokens: Number(usage[2]) } };
  const wanted = /call (\S+) (\{.*\})/s.exec(input);
  if (wanted && (body.tools ?? []).some((t: any) => t.function?.name === wanted[1])) {
    return { toolCalls: [{ name: wanted[1], arguments: wanted[2] }] };
  }
  return {
    text: JSON.stringify({
      system: body.messages
        .filter((m) => m.role === 'system')
        .map(textOf)
        .join('\n'),
      history: body.messages
        .slice(0, -1)
        .filter((m) => m.role !== 'system')
        .map((m) => `${m.role}: ${textOf(m)}`),
      input,
      ...(Array.isArray(last.content) ? { parts: last.content.map((p: any) => p.type) } : {}),
    }),
  };
}

function runPytest(python: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // -p no:cacheprovider and no bytecode: nothing is written into the repository.
    const child = spawn(
      python,
      ['-m', 'pytest', HERE, '-v', '-p', 'no:cacheprovider', '--rootdir', HERE, '-o', 'console_output_style=classic'],
      {
        cwd: HERE,
        env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('compat: the real Python clients (griptape, griptape-cloud-client) against the stack', function () {
  this.timeout(25 * 60_000);

  it('pass their pytest suite', async () => {
    const requirements = fs
      .readFileSync(path.join(HERE, 'requirements.txt'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const python = await pythonVenv('compat', requirements);
    const { baseUrl, modelProvider, codehost, stripe } = getStack();
    const [tenant, other] = await Promise.all([newTenant('compat'), newTenant('invitee')]);
    const model = modelProvider.uniqueModel('compat');
    modelProvider.script({ model, times: Infinity, respond: scriptedAgent });
    // Knowledge base searches ask the default model (DEFAULT_MODEL=local/test-model): the same agent, withdrawn after.
    const searches = { model: 'test-model', times: Infinity, respond: scriptedAgent };
    modelProvider.script(searches);
    // Embeddings for this model never come: a knowledge base job that uses it stays RUNNING until cancelled.
    const stallEmbedding = modelProvider.uniqueModel('compat-stall');
    modelProvider.stallEmbeddings(stallEmbedding);

    // The outside providers' side of connections and billing: an authorization code the user's browser would
    // bring back from the code host, and a price at the payment provider.
    const lookupKey = `compat_${Math.random().toString(36).slice(2)}`;
    stripe.addPrice({ lookupKey });

    const started = Date.now();
    const { code, output } = await runPytest(python, {
      TARMAC_CODEHOST_AUTH_CODE: codehost.issueCode(),
      TARMAC_PRICE_LOOKUP_KEY: lookupKey,
      TARMAC_BASE_URL: baseUrl,
      TARMAC_API_KEY: tenant.key,
      TARMAC_MODEL: `local/${model}`,
      TARMAC_STALL_EMBEDDING_MODEL: `local/${stallEmbedding}`,
      TARMAC_OTHER_API_KEY: other.key,
      TARMAC_OTHER_EMAIL: other.email,
      // For griptape's drivers used in the test process itself.
      GT_CLOUD_BASE_URL: baseUrl,
      GT_CLOUD_API_KEY: tenant.key,
    }).finally(() => modelProvider.withdraw(searches));
    // pytest's closing line (`=== 23 passed in 30.1s ===`) is never echoed as it stands: CI reads the test
    // count from the runner's summary line, and that must be mocha's.
    const summary = (output.trim().split('\n').pop() ?? '')
      .replace(/=+/g, '')
      .replace(/ in ([\d.]+)s/, '')
      .trim();
    if (code !== 0) console.log(output);
    else
      console.log(
        `      griptape clients (pytest): ${summary.replace(/ passed/, ' cases ok')} (${Math.round((Date.now() - started) / 1000)} s)`,
      );
    expect(code, `pytest failed (its output is above): ${summary}`).to.equal(0);
  });
});

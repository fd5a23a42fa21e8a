// The griptape ⇄ model-interface mapping of chat messages (src/services/conversations/chat-mapping.ts). The request
// fixtures are what griptape 1.13's GriptapeCloudPromptDriver sends (PromptStack.to_dict() shapes).
import { expect } from 'chai';
import {
  answerMessage,
  artifactText,
  ChatRequest,
  ChatRequestError,
  deltaMessage,
  ModelAnswerError,
  toCompletionRequest,
  toolDefinitions,
  toolOfFunction,
  toTurns,
  usageDeltaMessage,
  withoutNul,
} from '../../../../src/services/conversations/chat-mapping';

const text = (value: string) => ({
  type: 'TextMessageContent',
  artifact: { type: 'TextArtifact', id: 'a1', reference: null, meta: {}, name: 'a1', value },
});
const usage = { type: 'Usage', input_tokens: null, output_tokens: null };
const action = {
  type: 'ToolAction',
  tag: 'call_1',
  name: 'CalculatorTool',
  path: 'calculate',
  input: { expression: '2+2' },
};
const calculator = {
  name: 'CalculatorTool',
  activities: [
    {
      name: 'calculate',
      description: 'Can be used for computing simple numerical or algebraic calculations in Python',
      json_schema: {
        type: 'object',
        properties: { expression: { type: 'string' } },
        required: ['expression'],
        additionalProperties: false,
        $id: 'Schema',
        $schema: 'http://json-schema.org/draft-07/schema#',
      },
    },
  ],
};
const driverConfiguration = {
  max_tokens: null,
  use_native_tools: true,
  temperature: 0.1,
  structured_output_strategy: 'native' as const,
  extra_params: {},
};

function refused(fn: () => unknown): ChatRequestError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ChatRequestError) return err;
    throw err;
  }
  throw new Error('expected a ChatRequestError');
}

describe('chat mapping', () => {
  it('maps a tool-using conversation to turns: system, user, assistant text + tool calls, tool results', () => {
    const turns = toTurns([
      { type: 'Message', role: 'system', usage, content: [text('Be nice.'), text('\n\n'), text('Answer in JSON.')] },
      { type: 'Message', role: 'user', usage, content: [text('what is 2+2')] },
      {
        type: 'Message',
        role: 'assistant',
        usage,
        content: [
          text('Let me compute.'),
          { type: 'ActionCallMessageContent', artifact: { type: 'ActionArtifact', value: action } },
        ],
      },
      {
        type: 'Message',
        role: 'user',
        usage,
        content: [{ type: 'ActionResultMessageContent', artifact: { type: 'TextArtifact', value: '4' }, action }],
      },
      { type: 'Message', role: 'assistant', usage, content: [text('It is 4.')] },
    ]);
    expect(turns).to.deep.equal([
      { role: 'system', content: 'Be nice.\n\nAnswer in JSON.' },
      { role: 'user', content: 'what is 2+2' },
      {
        role: 'assistant',
        content: 'Let me compute.',
        toolCalls: [{ id: 'call_1', name: 'CalculatorTool_calculate', arguments: '{"expression":"2+2"}' }],
      },
      { role: 'tool', toolCallId: 'call_1', content: '4' },
      { role: 'assistant', content: 'It is 4.' },
    ]);
  });

  it('sends several results as tool turns before the text of the same user message; a call without text has null content', () => {
    const second = { ...action, tag: 'call_2', input: { expression: '3*3' } };
    expect(
      toTurns([
        {
          role: 'assistant',
          content: [
            { type: 'ActionCallMessageContent', artifact: { type: 'ActionArtifact', value: action } },
            { type: 'ActionCallMessageContent', artifact: { type: 'ActionArtifact', value: second } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'ActionResultMessageContent', artifact: { type: 'TextArtifact', value: '4' }, action },
            { type: 'ActionResultMessageContent', artifact: { type: 'ErrorArtifact', value: 'boom' }, action: second },
            text('and now?'),
          ],
        },
      ]),
    ).to.deep.equal([
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'call_1', name: 'CalculatorTool_calculate', arguments: '{"expression":"2+2"}' },
          { id: 'call_2', name: 'CalculatorTool_calculate', arguments: '{"expression":"3*3"}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', content: '4' },
      { role: 'tool', toolCallId: 'call_2', content: 'boom' },
      { role: 'user', content: 'and now?' },
    ]);
  });

  it("renders artifacts as griptape's to_text() does", () => {
    expect(artifactText({ type: 'JsonArtifact', value: { a: [1, 2], b: 'x' } })).to.equal('{"a": [1, 2], "b": "x"}');
    expect(
      artifactText({
        type: 'ListArtifact',
        value: [
          { type: 'TextArtifact', value: 'x' },
          { type: 'InfoArtifact', value: 'y' },
        ],
        item_separator: '\n\n',
      }),
    ).to.equal('x\n\ny');
    expect(artifactText({ type: 'BooleanArtifact', value: true })).to.equal('true');
    expect(artifactText({ type: 'BlobArtifact', value: Buffer.from('hi').toString('base64') })).to.equal('hi');
    expect(artifactText({ type: 'ImageArtifact', value: Buffer.alloc(10).toString('base64'), format: 'png' })).to.equal(
      'Image, format: png, size: 10 bytes',
    );
    expect(artifactText({ type: 'GenericArtifact', value: 7 })).to.equal('7');
  });

  it('refuses what it cannot carry, pointing at the part', () => {
    const image = refused(() =>
      toTurns([
        {
          role: 'user',
          content: [text('look'), { type: 'ImageMessageContent', artifact: { type: 'ImageArtifact', value: '' } }],
        },
      ]),
    );
    expect(image.message).to.contain('An ImageArtifact needs its bytes as base64');
    expect(image.path).to.equal('/body/messages/0/content/1/artifact/value');
    expect(refused(() => toTurns([{ role: 'user', content: [{ type: 'Nope' }] }])).message).to.contain(
      'Unknown message content type "Nope"',
    );
    expect(
      refused(() =>
        toTurns([
          {
            role: 'user',
            content: [{ type: 'ActionCallMessageContent', artifact: { type: 'ActionArtifact', value: action } }],
          },
        ]),
      ).path,
    ).to.equal('/body/messages/0/content/0/type');
    expect(
      refused(() =>
        toTurns([
          {
            role: 'user',
            content: [{ type: 'ActionResultMessageContent', artifact: { type: 'TextArtifact', value: '4' } }],
          },
        ]),
      ).path,
    ).to.equal('/body/messages/0/content/0/action');
    const body: ChatRequest = { messages: [], tools: [], driver_configuration: { extra_params: { stream: false } } };
    expect(refused(() => toCompletionRequest(body, true)).path).to.equal(
      '/body/driver_configuration/extra_params/stream',
    );
  });

  it('names functions that would be too long or taken with a hash, and maps their calls back', () => {
    const { definitions, names } = toolDefinitions([
      { name: 'A_b', activities: [{ name: 'c' }] },
      { name: 'A', activities: [{ name: 'b_c' }] },
      { name: 'T'.repeat(64), activities: [{ name: 'go' }] },
    ]);
    const fns = definitions.map((d) => d.name);
    expect(fns[0]).to.equal('A_b_c');
    expect(fns[1]).to.match(/^A_b_c_[0-9a-f]{8}$/);
    expect(fns[2]).to.have.length(64);
    expect(new Set(fns).size).to.equal(3);
    expect(toolOfFunction(names, fns[1])).to.deep.equal({ name: 'A', path: 'b_c' });
    expect(toolOfFunction(names, fns[2])).to.deep.equal({ name: 'T'.repeat(64), path: 'go' });
    // How many functions a model takes is the provider's limit, not ours.
    expect(
      toolDefinitions(Array.from({ length: 129 }, (_, i) => ({ name: `T${i}`, activities: [{ name: 'go' }] })))
        .definitions,
    ).to.have.length(129);
  });

  it('builds the model request: functions <tool>_<activity> with the activity schema, settings, structured output by strategy', () => {
    const messages = [{ role: 'user', content: [text('hi')] }];
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const request = toCompletionRequest(
      {
        messages,
        tools: [calculator],
        output_schema: schema,
        driver_configuration: { ...driverConfiguration, model: 'local/x', max_tokens: 100, extra_params: { seed: 3 } },
      },
      true,
    );
    expect(request).to.deep.include({
      model: 'local/x',
      stream: true,
      maxTokens: 100,
      temperature: 0.1,
      extraParams: { seed: 3 },
      outputSchema: { name: 'Output', schema },
    });
    expect(request.turns).to.deep.equal([{ role: 'user', content: 'hi' }]);
    expect(request.tools).to.deep.equal([
      {
        name: 'CalculatorTool_calculate',
        description: calculator.activities[0].description,
        parameters: calculator.activities[0].json_schema,
      },
    ]);
    expect(request).to.not.have.property('toolChoice');

    const plain = toCompletionRequest(
      { messages, tools: [calculator], driver_configuration: { ...driverConfiguration, use_native_tools: false } },
      false,
    );
    expect(plain).to.not.have.any.keys('tools', 'outputSchema', 'maxTokens', 'extraParams', 'model');

    const rule = toCompletionRequest(
      {
        messages,
        tools: [],
        output_schema: schema,
        driver_configuration: { ...driverConfiguration, structured_output_strategy: 'rule' },
      },
      false,
    );
    expect(rule).to.not.have.any.keys('tools', 'outputSchema', 'toolChoice');

    // `tool`: griptape has added its StructuredOutputTool; a client that did not gets it added here. A call is required.
    const tool = toCompletionRequest(
      {
        messages,
        tools: [calculator],
        output_schema: schema,
        driver_configuration: { ...driverConfiguration, structured_output_strategy: 'tool' },
      },
      false,
    );
    expect(tool.toolChoice).to.equal('required');
    expect(tool).to.not.have.property('outputSchema');
    expect(tool.tools!.map((t) => t.name)).to.deep.equal([
      'CalculatorTool_calculate',
      'StructuredOutputTool_provide_output',
    ]);
    expect(tool.tools![1].parameters).to.equal(schema);
  });

  it('answers with a griptape Message dict: text, then tool calls as ActionCallMessageContent with a ToolAction', () => {
    const { names } = toolDefinitions([calculator, { name: 'My-Tool', activities: [{ name: 'do_it' }] }]);
    let n = 0;
    const id = () => `id${++n}`;
    const message = answerMessage(
      {
        text: 'Computing.',
        toolCalls: [
          { id: 'call_9', name: 'CalculatorTool_calculate', arguments: '{"expression": "6*7"}' },
          { id: 'call_10', name: 'My-Tool_do_it', arguments: '' },
        ],
        usage: { input_tokens: 12, output_tokens: 5 },
      },
      names,
      id,
    );
    expect(message).to.deep.equal({
      type: 'Message',
      role: 'assistant',
      usage: { type: 'Usage', input_tokens: 12, output_tokens: 5 },
      content: [
        {
          type: 'TextMessageContent',
          artifact: { type: 'TextArtifact', id: 'id1', reference: null, meta: {}, name: 'id1', value: 'Computing.' },
        },
        {
          type: 'ActionCallMessageContent',
          artifact: {
            type: 'ActionArtifact',
            id: 'id2',
            reference: null,
            meta: {},
            name: 'id2',
            value: {
              type: 'ToolAction',
              tag: 'call_9',
              name: 'CalculatorTool',
              path: 'calculate',
              input: { expression: '6*7' },
            },
          },
        },
        {
          type: 'ActionCallMessageContent',
          artifact: {
            type: 'ActionArtifact',
            id: 'id3',
            reference: null,
            meta: {},
            name: 'id3',
            value: { type: 'ToolAction', tag: 'call_10', name: 'My-Tool', path: 'do_it', input: {} },
          },
        },
      ],
    });
    // Only tool calls: no empty text content. No tool calls: the text even when empty.
    expect(
      answerMessage(
        {
          text: '',
          toolCalls: [{ id: 'c', name: 'X_y', arguments: '{}' }],
          usage: { input_tokens: 0, output_tokens: 0 },
        },
        names,
      ).content,
    ).to.have.length(1);
    expect(
      answerMessage({ text: '', toolCalls: [], usage: { input_tokens: 0, output_tokens: 0 } }, names).content[0],
    ).to.deep.include({ type: 'TextMessageContent' });
    expect(() =>
      answerMessage(
        {
          text: '',
          toolCalls: [{ id: 'c', name: 'X_y', arguments: '[1]' }],
          usage: { input_tokens: 0, output_tokens: 0 },
        },
        names,
      ),
    ).to.throw(ModelAnswerError, 'not a JSON object');
  });

  it('replaces NUL characters of answers, which PostgreSQL cannot store', () => {
    expect(withoutNul({ a: ['x\u0000y', 1, null], 'k\u0000': true })).to.deep.equal({
      a: ['x\uFFFDy', 1, null],
      'k\uFFFD': true,
    });
  });

  it('streams griptape DeltaMessage dicts: text at index 0, tool call pieces at their index, usage last', () => {
    const { names } = toolDefinitions([calculator]);
    expect(deltaMessage({ kind: 'text', text: 'Hel' }, names)).to.deep.equal({
      type: 'DeltaMessage',
      role: null,
      usage: { type: 'Usage', input_tokens: null, output_tokens: null },
      content: { type: 'TextDeltaMessageContent', index: 0, text: 'Hel' },
    });
    expect(
      deltaMessage(
        { kind: 'tool-call', index: 1, id: 'call_1', name: 'CalculatorTool_calculate', argumentsPart: '' },
        names,
      ).content,
    ).to.deep.equal({
      type: 'ActionCallDeltaMessageContent',
      index: 1,
      tag: 'call_1',
      name: 'CalculatorTool',
      path: 'calculate',
      partial_input: '',
    });
    expect(deltaMessage({ kind: 'tool-call', index: 1, argumentsPart: '{"ex' }, names).content).to.deep.equal({
      type: 'ActionCallDeltaMessageContent',
      index: 1,
      tag: null,
      name: null,
      path: null,
      partial_input: '{"ex',
    });
    expect(usageDeltaMessage({ input_tokens: 3, output_tokens: 4 })).to.deep.equal({
      type: 'DeltaMessage',
      role: null,
      usage: { type: 'Usage', input_tokens: 3, output_tokens: 4 },
      content: null,
    });
  });
});

// Chat message requests shaped as griptape 1.13's GriptapeCloudPromptDriver sends them (a conversation of
// Message dicts, the driver's configuration), for the tests that post to /api/chat/messages.
const usage = { type: 'Usage', input_tokens: null, output_tokens: null };
let ids = 0;
export const artifact = (value: string, type = 'TextArtifact') => ({
  type,
  id: `a${++ids}`,
  reference: null,
  meta: {},
  name: `a${ids}`,
  value,
});
export const message = (role: string, ...content: unknown[]) => ({ type: 'Message', role, usage, content });
export const text = (value: string) => ({ type: 'TextMessageContent', artifact: artifact(value) });
/** A request as GriptapeCloudPromptDriver builds it. */
export function chatRequest(
  model: string,
  over: { messages?: unknown[]; tools?: unknown[]; output_schema?: unknown; config?: Record<string, unknown> } = {},
) {
  return {
    messages: over.messages ?? [message('system', text('You are terse.')), message('user', text('Say hello'))],
    tools: over.tools ?? [],
    ...(over.output_schema ? { output_schema: over.output_schema } : {}),
    driver_configuration: {
      model: `local/${model}`,
      max_tokens: null,
      use_native_tools: true,
      temperature: 0.1,
      structured_output_strategy: 'native',
      extra_params: {},
      ...over.config,
    },
  };
}

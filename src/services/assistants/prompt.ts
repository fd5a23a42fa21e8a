// What an assistant run says to the model: its rulesets as system instructions, the thread's earlier
// exchanges, the user message (input and args), and the turns of this run so far; and which functions it
// offers (the assistant's structures and tool activities). Pure functions: the activities load the rows.
import type { ChatTurn, ToolDefinition } from '../../drivers/model/types';
import type { AssistantToolDefinition, TranscriptEntry } from '../../persistence/entities/assistant';

export interface RulesetText {
  name: string;
  rules: string[];
}

/** The run's user message: its input (else the assistant's) followed by its args, blank-line separated. */
export function userMessageOf(input: string | null | undefined, args: string[]): string {
  return [input ?? '', ...args].filter((part) => part.trim() !== '').join('\n\n');
}

export function systemInstructions(rulesets: RulesetText[]): string | undefined {
  const blocks = rulesets
    .filter((r) => r.rules.length)
    .map((r) => `Ruleset "${r.name}":\n${r.rules.map((rule, i) => `${i + 1}. ${rule}`).join('\n')}`);
  return blocks.length ? `Follow these rules.\n\n${blocks.join('\n\n')}` : undefined;
}

export function promptTurns(p: {
  rulesets: RulesetText[];
  history: Array<{ input: string; output: string }>;
  userMessage: string;
  transcript: TranscriptEntry[];
}): ChatTurn[] {
  const system = systemInstructions(p.rulesets);
  return [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    ...p.history.flatMap((m): ChatTurn[] => [
      { role: 'user', content: m.input },
      { role: 'assistant', content: m.output },
    ]),
    { role: 'user', content: p.userMessage },
    ...p.transcript.map(({ step: _step, ...turn }) => turn as ChatTurn),
  ];
}

/** Function names providers accept: ^[a-zA-Z0-9_-]{1,64}$. */
const slug = (s: string) =>
  s
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 48) || 'unnamed';

export interface DescribedTool {
  toolId: string;
  /** The tool's own name (its description's `name`). */
  name: string;
  activities: Array<{ name: string; description: string; schema: unknown }>;
  /** Set when the tool requires approval of each call (its resource's requires_approval). */
  approval?: { timeoutSeconds: number | null; notify?: true };
}

export const STRUCTURE_PARAMETERS = {
  type: 'object',
  properties: {
    args: {
      type: 'array',
      items: { type: 'string' },
      description: 'The command-line arguments of the run, one string each.',
    },
  },
  required: ['args'],
};

/** How many passages a retrieval function answers at most, and by default. */
export const MAX_RETRIEVAL_COUNT = 20;
export const DEFAULT_RETRIEVAL_COUNT = 5;

export const RETRIEVAL_PARAMETERS = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What to look for, in words likely to appear in the passages.' },
    count: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_RETRIEVAL_COUNT,
      description: `How many passages to answer (default ${DEFAULT_RETRIEVAL_COUNT}).`,
    },
  },
  required: ['query'],
};

export interface RetrievalSource {
  kind: 'knowledge_base' | 'retriever';
  id: string;
  name: string;
  description: string | null;
}

/**
 * One function per structure (`structure_<name>`, parameters `{args: string[]}`), per tool activity
 * (`<tool name>_<activity>`, the activity's schema), per knowledge base (`knowledge_base_<name>`) and per
 * retriever (`retriever_<name>`), the last two taking `{query, count?}` and answering numbered passages;
 * names made unique with a numeric suffix.
 */
export function assistantToolDefinitions(
  structures: Array<{ id: string; name: string; description: string }>,
  tools: DescribedTool[],
  sources: RetrievalSource[] = [],
): AssistantToolDefinition[] {
  const taken = new Set<string>();
  const unique = (base: string) => {
    let name = base.slice(0, 64);
    for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 60)}_${i}`;
    taken.add(name);
    return name;
  };
  const definitions: AssistantToolDefinition[] = structures.map((s) => ({
    name: unique(`structure_${slug(s.name)}`),
    description: `${s.description || `Runs the structure "${s.name}".`} Answers with the run's output.`,
    parameters: STRUCTURE_PARAMETERS,
    target: { kind: 'structure', id: s.id },
  }));
  for (const tool of tools) {
    for (const a of tool.activities) {
      const schema =
        a.schema && typeof a.schema === 'object' ? (a.schema as Record<string, unknown>) : { type: 'object' };
      definitions.push({
        name: unique(`${slug(tool.name)}_${slug(a.name)}`),
        description: a.description || `Activity ${a.name} of tool ${tool.name}.`,
        parameters: schema,
        target: {
          kind: 'tool',
          id: tool.toolId,
          activity: a.name,
          ...(tool.approval ? { approval: tool.approval } : {}),
        },
      });
    }
  }
  for (const source of sources) {
    const what = source.kind === 'knowledge_base' ? 'knowledge base' : 'retriever';
    definitions.push({
      name: unique(`${source.kind}_${slug(source.name)}`),
      description:
        `Searches the ${what} "${source.name}"${source.description ? ` (${source.description})` : ''} and answers ` +
        'the passages that best match `query`, numbered, each with its source. Use it to answer from these documents.',
      parameters: RETRIEVAL_PARAMETERS,
      target: { kind: source.kind, id: source.id },
    });
  }
  return definitions;
}

/** What the model sees of a definition. */
export const offeredTools = (defs: AssistantToolDefinition[]): ToolDefinition[] =>
  defs.map(({ name, description, parameters }) => ({ name, description, parameters }));

/** The text a tool call's result gives back to the model: an artifact's value, else JSON. */
export function resultText(output: unknown): string {
  if (output && typeof output === 'object' && 'value' in output) {
    const value = (output as { value: unknown }).value;
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  return typeof output === 'string' ? output : JSON.stringify(output ?? null);
}

/** A TextArtifact as griptape serializes it (`TextArtifact.from_dict` reads it back). */
export function textArtifact(value: string, id: string): Record<string, unknown> {
  return { type: 'TextArtifact', id, reference: null, meta: {}, name: id, value };
}

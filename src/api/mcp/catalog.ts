// What an organization offers an MCP client (docs/mcp.md): one tool per structure (run it), function (execute
// it), knowledge base (query it; search it), retriever (query it) and activity of a tool, read from the
// database at each list. A tool's activities are those of its description, cached per deployment (the describe
// run an assistant makes too); a tool not described yet is named in `undescribed`, for the endpoint to describe.
// A name is the kind, the resource's name made safe (and the activity's) and the first 8 hex digits of its id:
// stable while the resource exists, unique in the organization, within MCP's 128 characters of [A-Za-z0-9_.-].
import { In } from 'typeorm';
import type { DataSource } from 'typeorm';
import { CodeResource, KnowledgeBase, Retriever } from '../../persistence/entities';
import { cachedDescription } from '../../services/assistants/child-runs';
import type { Caller } from '../../services/caller';

export type McpToolKind =
  | 'run_structure'
  | 'execute_function'
  | 'query_knowledge_base'
  | 'search_knowledge_base'
  | 'query_retriever'
  | 'run_tool_activity';

export interface McpTool {
  name: string;
  kind: McpToolKind;
  resourceId: string;
  /** The activity of a `run_tool_activity` tool. */
  activity?: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, unknown>;
    required?: string[];
    additionalProperties?: boolean;
  };
}

/** Resources listed at most, per kind (docs/mcp.md#limits). */
export const MAX_TOOLS_PER_KIND = 200;

const query = { type: 'string', minLength: 1, maxLength: 10_000, description: 'What to look for.' };
const QUERY_SCHEMA: McpTool['inputSchema'] = {
  type: 'object',
  properties: {
    query,
    count: { type: 'integer', minimum: 1, maximum: 100, description: 'How many entries at most (default 5).' },
  },
  required: ['query'],
  additionalProperties: false,
};

const SCHEMAS: Record<McpToolKind, McpTool['inputSchema']> = {
  run_structure: {
    type: 'object',
    properties: {
      args: {
        type: 'array',
        items: { type: 'string', maxLength: 100_000 },
        maxItems: 100,
        description: "The run's arguments (its argv).",
      },
    },
    additionalProperties: false,
  },
  execute_function: {
    type: 'object',
    properties: { body: { description: "The JSON the function's handler gets as `body`." } },
    additionalProperties: false,
  },
  query_knowledge_base: QUERY_SCHEMA,
  search_knowledge_base: QUERY_SCHEMA,
  // A retriever's components have their own counts.
  query_retriever: { type: 'object', properties: { query }, required: ['query'], additionalProperties: false },
  // An activity's own schema, from its tool's description (toolActivities gives it).
  run_tool_activity: { type: 'object', properties: {} },
};

const DESCRIBE: Record<McpToolKind, (name: string, description: string) => string> = {
  run_structure: (n, d) => `Runs the structure "${n}" and answers its output.${d ? ` ${d}` : ''}`,
  execute_function: (n, d) => `Executes the function "${n}" and answers its result.${d ? ` ${d}` : ''}`,
  query_knowledge_base: (n, d) => `Finds the entries of the knowledge base "${n}" nearest a query.${d ? ` ${d}` : ''}`,
  search_knowledge_base: (n, d) =>
    `Answers a question from the knowledge base "${n}" (a model reads its nearest entries).${d ? ` ${d}` : ''}`,
  query_retriever: (n, d) => `Finds entries with the retriever "${n}".${d ? ` ${d}` : ''}`,
  run_tool_activity: (n, d) => `${d || 'An activity'} (of the tool "${n}")`,
};

/** `My Agent (v2)` → `my-agent-v2`, at most 80 characters. */
function slug(name: string): string {
  const s = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return s || 'unnamed';
}

function tool(kind: McpToolKind, id: string, name: string, description: string | null): McpTool {
  return {
    name: `${kind}.${slug(name)}.${id.replace(/-/g, '').slice(0, 8)}`,
    kind,
    resourceId: id,
    description: DESCRIBE[kind](name, description ?? ''),
    inputSchema: SCHEMAS[kind],
  };
}

/** An activity's schema as MCP takes it: an object schema (an activity without one takes any object). */
function activitySchema(schema: unknown): McpTool['inputSchema'] {
  const s = schema as Partial<McpTool['inputSchema']> | null | undefined;
  if (!s || typeof s !== 'object' || s.type !== 'object') return { type: 'object', properties: {} };
  return { ...s, type: 'object', properties: s.properties ?? {} };
}

/** The activities of the tools described for their current deployment, and the tools not described yet. */
async function toolActivities(ds: DataSource, tools: CodeResource[]) {
  const described = await Promise.all(tools.map((t) => cachedDescription(ds, t)));
  const activities = tools.flatMap((t, i) =>
    (described[i]?.activities ?? []).map((a): McpTool => ({
      ...tool('run_tool_activity', t.resource_id, `${t.name} ${a.name}`, null),
      description: DESCRIBE.run_tool_activity(t.name, a.description),
      activity: a.name,
      inputSchema: activitySchema(a.schema),
    })),
  );
  return { activities, undescribed: tools.filter((_, i) => !described[i]).map((t) => t.resource_id) };
}

const knowledgeTools = (kbs: KnowledgeBase[], retrievers: Retriever[]): McpTool[] => [
  ...kbs.flatMap((kb) => [
    tool('query_knowledge_base', kb.knowledge_base_id, kb.name, kb.description),
    tool('search_knowledge_base', kb.knowledge_base_id, kb.name, kb.description),
  ]),
  ...retrievers.map((r) => tool('query_retriever', r.retriever_id, r.name, r.description)),
];

/**
 * The organization's tools, in a stable order (kind, then the resource's creation), and the tool resources
 * deployed but not described yet.
 */
export async function catalogOf(ds: DataSource, caller: Caller): Promise<{ tools: McpTool[]; undescribed: string[] }> {
  const page = { order: { created_at: 'ASC' as const }, take: MAX_TOOLS_PER_KIND };
  // A run's credential reads knowledge only, as on the REST routes (runScoped): no run, execute or tool call.
  if (caller.runId) {
    const [kbs, retrievers] = await Promise.all([
      ds.getRepository(KnowledgeBase).find({ where: { organization_id: caller.organizationId }, ...page }),
      ds.getRepository(Retriever).find({ where: { organization_id: caller.organizationId }, ...page }),
    ]);
    return { tools: knowledgeTools(kbs, retrievers), undescribed: [] };
  }
  const [code, kbs, retrievers, toolResources] = await Promise.all([
    ds.getRepository(CodeResource).find({
      where: { organization_id: caller.organizationId, kind: In(['structure', 'function']) },
      ...page,
    }),
    ds.getRepository(KnowledgeBase).find({ where: { organization_id: caller.organizationId }, ...page }),
    ds.getRepository(Retriever).find({ where: { organization_id: caller.organizationId }, ...page }),
    ds.getRepository(CodeResource).find({ where: { organization_id: caller.organizationId, kind: 'tool' }, ...page }),
  ]);
  const { activities, undescribed } = await toolActivities(
    ds,
    toolResources.filter((t) => t.latest_deployment_id !== null),
  );
  const tools = [
    ...code
      .filter((r) => r.kind === 'structure')
      .map((r) => tool('run_structure', r.resource_id, r.name, r.description)),
    ...code
      .filter((r) => r.kind === 'function')
      .map((r) => tool('execute_function', r.resource_id, r.name, r.description)),
    ...knowledgeTools(kbs, retrievers),
    ...activities,
  ];
  return { tools, undescribed };
}

// What an organization offers an MCP client (docs/mcp.md): one tool per structure (run it), function (execute
// it), knowledge base (query it; search it) and retriever (query it), read from the database at each list.
// A tool's name is its kind, the resource's name made safe and the first 8 hex digits of its id: stable while
// the resource exists, unique in the organization, within MCP's 128 characters of [A-Za-z0-9_.-].
import { In } from 'typeorm';
import type { DataSource } from 'typeorm';
import { CodeResource, KnowledgeBase, Retriever } from '../../persistence/entities';
import type { Caller } from '../../services/caller';

export type McpToolKind =
  'run_structure' | 'execute_function' | 'query_knowledge_base' | 'search_knowledge_base' | 'query_retriever';

export interface McpTool {
  name: string;
  kind: McpToolKind;
  resourceId: string;
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
};

const DESCRIBE: Record<McpToolKind, (name: string, description: string) => string> = {
  run_structure: (n, d) => `Runs the structure "${n}" and answers its output.${d ? ` ${d}` : ''}`,
  execute_function: (n, d) => `Executes the function "${n}" and answers its result.${d ? ` ${d}` : ''}`,
  query_knowledge_base: (n, d) => `Finds the entries of the knowledge base "${n}" nearest a query.${d ? ` ${d}` : ''}`,
  search_knowledge_base: (n, d) =>
    `Answers a question from the knowledge base "${n}" (a model reads its nearest entries).${d ? ` ${d}` : ''}`,
  query_retriever: (n, d) => `Finds entries with the retriever "${n}".${d ? ` ${d}` : ''}`,
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

/** The organization's tools, in a stable order (kind, then the resource's creation). */
export async function catalogOf(ds: DataSource, caller: Caller): Promise<McpTool[]> {
  const page = { order: { created_at: 'ASC' as const }, take: MAX_TOOLS_PER_KIND };
  const [code, kbs, retrievers] = await Promise.all([
    ds.getRepository(CodeResource).find({
      where: { organization_id: caller.organizationId, kind: In(['structure', 'function']) },
      ...page,
    }),
    ds.getRepository(KnowledgeBase).find({ where: { organization_id: caller.organizationId }, ...page }),
    ds.getRepository(Retriever).find({ where: { organization_id: caller.organizationId }, ...page }),
  ]);
  return [
    ...code
      .filter((r) => r.kind === 'structure')
      .map((r) => tool('run_structure', r.resource_id, r.name, r.description)),
    ...code
      .filter((r) => r.kind === 'function')
      .map((r) => tool('execute_function', r.resource_id, r.name, r.description)),
    ...kbs.flatMap((kb) => [
      tool('query_knowledge_base', kb.knowledge_base_id, kb.name, kb.description),
      tool('search_knowledge_base', kb.knowledge_base_id, kb.name, kb.description),
    ]),
    ...retrievers.map((r) => tool('query_retriever', r.retriever_id, r.name, r.description)),
  ];
}

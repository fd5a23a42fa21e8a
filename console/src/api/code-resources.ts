// Functions and tools through their own routes (structures keep theirs): the list, one resource, its
// deployments, a new deployment; one shape for both, so their pages are one page. Then what each has of its own:
// a function's execute, a tool's OpenAPI document and the run of one of its activities.
import { api, data, type Schemas } from './client';

export type CodeKind = 'function' | 'tool';
export type Deployment = Schemas['Deployment'];

export interface CodeResource {
  id: string;
  name: string;
  description?: string;
  latest_deployment_id?: string | null;
  created_at: string;
  /** A tool of `mcp` code: the remote MCP server it offers the tools of. */
  mcpUrl?: string;
}

const ofFunction = (f: Schemas['Function']): CodeResource => ({ ...f, id: f.function_id });
const ofTool = (t: Schemas['Tool']): CodeResource => ({ ...t, id: t.tool_id, mcpUrl: t.code.mcp?.url });

export async function listResources(kind: CodeKind, page: number) {
  const query = { page, page_size: 25 };
  if (kind === 'function') {
    const list = await data(api.GET('/api/functions', { params: { query } }));
    return { items: list.functions.map(ofFunction), totalPages: list.pagination.total_pages };
  }
  const list = await data(api.GET('/api/tools', { params: { query } }));
  return { items: list.tools.map(ofTool), totalPages: list.pagination.total_pages };
}

export async function getResource(kind: CodeKind, id: string): Promise<CodeResource> {
  return kind === 'function'
    ? ofFunction(await data(api.GET('/api/functions/{function_id}', { params: { path: { function_id: id } } })))
    : ofTool(await data(api.GET('/api/tools/{tool_id}', { params: { path: { tool_id: id } } })));
}

/** A new resource from the built-in example project; its first deployment starts at once. */
export async function createResource(kind: CodeKind, name: string): Promise<CodeResource> {
  const body = { name, code: { default: {} } };
  return kind === 'function'
    ? ofFunction(await data(api.POST('/api/functions', { body })))
    : ofTool(await data(api.POST('/api/tools', { body })));
}

/** A tool of a remote MCP server; `authorizationSecretId`: a secret whose value is sent as its Authorization header. */
export async function createMcpTool(name: string, url: string, authorizationSecretId?: string): Promise<CodeResource> {
  const headers = authorizationSecretId
    ? [{ name: 'Authorization', value: authorizationSecretId, source: 'secret_ref' as const }]
    : [];
  return ofTool(await data(api.POST('/api/tools', { body: { name, code: { mcp: { url, headers } } } })));
}

/** What a deployment of a tool of `mcp` code listed (its status_detail). */
export interface McpListing {
  mcp_server?: { name: string; version: string };
  mcp_tools?: Array<{ name: string; description: string }>;
}

export async function listDeployments(kind: CodeKind, id: string): Promise<Deployment[]> {
  const query = { page_size: 10 };
  const list =
    kind === 'function'
      ? await data(
          api.GET('/api/functions/{function_id}/deployments', { params: { path: { function_id: id }, query } }),
        )
      : await data(api.GET('/api/tools/{tool_id}/deployments', { params: { path: { tool_id: id }, query } }));
  return list.deployments;
}

export async function deployAgain(kind: CodeKind, id: string): Promise<void> {
  if (kind === 'function')
    await data(api.POST('/api/functions/{function_id}/deployments', { params: { path: { function_id: id } } }));
  else await data(api.POST('/api/tools/{tool_id}/deployments', { params: { path: { tool_id: id } } }));
}

export const isOpenDeployment = (status: string) => status === 'QUEUED' || status === 'DEPLOYING';

/** The function's answer to `body` (POST /api/functions/{id}/execute answers once the run ends). */
export const executeFunction = (id: string, body: unknown) =>
  data(
    api.POST('/api/functions/{function_id}/execute', { params: { path: { function_id: id } }, body: body as never }),
  );

/** What the console reads of a tool's OpenAPI document: its paths, an activity each (`/activities/<name>`). */
export interface ToolDocument {
  paths?: Record<string, { post?: { operationId?: string; description?: string } }>;
}

export const getToolDocument = async (id: string) =>
  (await data(api.GET('/api/tools/{tool_id}/openapi', { params: { path: { tool_id: id } } }))) as ToolDocument;

export const runToolActivity = (id: string, activity: string, params: unknown) =>
  data(
    api.POST('/api/tools/{tool_id}/activities/{activity_name}', {
      params: { path: { tool_id: id, activity_name: activity } },
      body: params as never,
    }),
  );

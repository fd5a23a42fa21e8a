// Tools of `mcp` code: a remote MCP server's tools as the tool's activities (docs/mcp.md#mcp-servers-as-tools).
// Deploying one connects to the server through the outbound policy and lists its tools: the listing is the
// deployment (its status_detail), nothing is built. A describe run answers that listing; an activity run calls
// the listed tool once on the server, and its text result is the run's artifact. The server's failures (refused,
// unreachable, a tool error, a response too large) end the run FAILED with a message the assistant's model reads.
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { DataSource } from 'typeorm';
import { callMcpTool, listMcpTools, type ListedTool, type McpServerTarget } from '../../drivers/mcp/remote-server';
import { ResponseTooLarge } from '../../drivers/http/guarded-fetch';
import type { McpServerLocation } from '../../persistence/entities/code-resource';
import type { Deployment } from '../../persistence/entities';
import { OutboundRefused, type OutboundPolicy } from '../../security/outbound-policy';
import type { SecretBox } from '../../security/secret-box';
import type { DeploymentOutcome, RunEnding } from '../../temporal/contracts';
import { griptapeId } from '../../ids';
import { textArtifact } from '../assistants/prompt';
import { resolveEnvVars, RunSetupError } from './runs/execution';

export interface McpToolDeps {
  ds: DataSource;
  box: SecretBox;
  policy: OutboundPolicy;
  /** Cap of each response body of the server (RUN_RESULT_LIMIT_BYTES: results travel in workflow history). */
  maxResponseBytes: number;
}

/** What a deployment of an `mcp` tool records in its status_detail. */
export interface McpDeploymentDetail {
  reason: 'Deployed';
  mcp_server: { name: string; version: string };
  mcp_tools: ListedTool[];
}

/** The server to connect to, its headers' secret refs resolved (RunSetupError SecretNotFound when one is gone). */
async function targetOf(
  deps: McpToolDeps,
  organizationId: string,
  location: McpServerLocation,
): Promise<McpServerTarget> {
  const headers = await resolveEnvVars(deps.ds, deps.box, organizationId, location.headers, 'Header');
  return { url: location.url, headers: Object.fromEntries(headers.map((h) => [h.name, h.value])) };
}

/** Why talking to the server failed, in words for the tenant (a refusal says no more than the policy's message). */
export function mcpFailure(err: unknown): { reason: string; message: string } {
  if (err instanceof OutboundRefused) return { reason: 'AddressRefused', message: err.message };
  let cause: unknown = err;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof OutboundRefused) return { reason: 'AddressRefused', message: cause.message };
    if (cause instanceof ResponseTooLarge) return { reason: 'ResponseTooLarge', message: cause.message };
    cause = (cause as { cause?: unknown }).cause;
  }
  if (err instanceof McpError) return { reason: 'McpError', message: `The MCP server answered: ${err.message}` };
  const message = err instanceof Error ? err.message : String(err);
  const detail = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return { reason: 'McpServerUnavailable', message: `The MCP server could not be reached: ${message}${detail}` };
}

/** Lists the server's tools: the deployment's outcome (FAILED, with why, when it cannot be listed). */
export async function deployMcpTool(
  deps: McpToolDeps,
  organizationId: string,
  location: McpServerLocation,
  signal: AbortSignal,
): Promise<DeploymentOutcome> {
  const codeSource = { mcp: { url: location.url } };
  try {
    const target = await targetOf(deps, organizationId, location);
    const listing = await listMcpTools(target, {
      policy: deps.policy,
      signal,
      maxResponseBytes: deps.maxResponseBytes,
    });
    const detail: McpDeploymentDetail = { reason: 'Deployed', mcp_server: listing.server, mcp_tools: listing.tools };
    return { status: 'SUCCEEDED', buildPath: null, codeSource, fingerprint: null, detail: { ...detail } };
  } catch (err) {
    if (signal.aborted) throw signal.reason ?? err;
    const detail = err instanceof RunSetupError ? { reason: err.reason, message: err.message } : mcpFailure(err);
    return { status: 'FAILED', detail, codeSource };
  }
}

/** The tools a deployment of an `mcp` tool listed (none for any other deployment). */
export const listedTools = (deployment: Deployment | null): ListedTool[] =>
  (deployment?.status_detail as Partial<McpDeploymentDetail> | null)?.mcp_tools ?? [];

/**
 * A run of an `mcp` tool: `{describe: true}` answers its deployment's listing; `{activity, params}` calls that
 * tool on the server once. `log` records what the run did, as its log lines.
 */
export async function runMcpTool(
  deps: McpToolDeps,
  run: { organization_id: string; input: unknown },
  tool: { name: string; location: McpServerLocation; deployment: Deployment | null },
  opts: { signal: AbortSignal; timeoutMs: number; log: (stream: 'stdout' | 'stderr', line: string) => Promise<void> },
): Promise<RunEnding> {
  const input = (run.input ?? {}) as { describe?: boolean; activity?: string; params?: unknown };
  const listed = listedTools(tool.deployment);
  if (input.describe || input.activity === undefined) {
    const activities = listed.map((t) => ({ name: t.name, description: t.description, schema: t.schema }));
    return { status: 'SUCCEEDED', exitCode: 0, message: null, output: { name: tool.name, activities } };
  }
  const activity = input.activity;
  if (!listed.some((t) => t.name === activity))
    return {
      status: 'FAILED',
      exitCode: 2,
      message: `UnknownActivity: The MCP server listed no tool named ${JSON.stringify(activity)} when the tool was deployed`,
    };
  const params = input.params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
    return { status: 'FAILED', exitCode: 2, message: 'BadArguments: the arguments of an MCP tool are a JSON object' };
  const target = await targetOf(deps, run.organization_id, tool.location);
  await opts.log('stdout', `tools/call ${activity} on ${tool.location.url}`);
  try {
    const result = await callMcpTool(
      target,
      { policy: deps.policy, signal: opts.signal, maxResponseBytes: deps.maxResponseBytes, timeoutMs: opts.timeoutMs },
      activity,
      (params ?? {}) as Record<string, unknown>,
    );
    if (result.isError) {
      await opts.log('stderr', `the tool answered an error: ${result.text.slice(0, 2000)}`);
      return { status: 'FAILED', exitCode: 1, message: `ToolError: ${result.text.slice(0, 4000)}` };
    }
    await opts.log('stdout', `the tool answered ${Buffer.byteLength(result.text)} bytes`);
    return { status: 'SUCCEEDED', exitCode: 0, message: null, output: textArtifact(result.text, griptapeId()) };
  } catch (err) {
    if (opts.signal.aborted) throw opts.signal.reason ?? err;
    const failure = mcpFailure(err);
    await opts.log('stderr', failure.message);
    return { status: 'FAILED', exitCode: 1, message: `${failure.reason}: ${failure.message}` };
  }
}

// Structures with a successful deployment, made directly in the database and on disk (a build directory
// with its manifest), so run tests do not depend on the deployment pipeline.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { CodeResource, Deployment } from '../../src/persistence/entities';
import type { EnvVar } from '../../src/persistence/entities/code-resource';
import { writeManifest } from '../../src/runtime/manifest';
import { findTool } from '../../src/runtime/process/confine';
import { getStack } from './stack';

let python: string | undefined;

/** The python3 binary builds use (systemPython3): the system's, which sandboxed runs can read. */
export function python3(): string {
  python ??= execFileSync(findTool('python3') ?? 'python3', ['-c', 'import sys; print(sys.executable)'], {
    encoding: 'utf8',
  }).trim();
  return python;
}

export interface BuiltStructure {
  structureId: string;
  deploymentId: string;
  buildPath: string;
}

export async function structureWithBuild(
  organizationId: string,
  opts: {
    /** Files of the build's work directory, by relative path. */
    files: Record<string, string>;
    mainFile?: string;
    runtime?: 'python3' | 'nodejs';
    envVars?: EnvVar[];
    webhookEnabled?: boolean;
    name?: string;
    /** Default 'structure'; 'function' makes a function (the manifest then carries `handler`), 'tool' a tool (`tool`). */
    kind?: 'structure' | 'function' | 'tool';
    handler?: string;
    /** Another database than the stack's (a drill's own PostgreSQL); the build directory is the stack's. */
    ds?: DataSource;
  },
): Promise<BuiltStructure> {
  const { config } = getStack();
  const ds = opts.ds ?? getStack().ds;
  const runtime = opts.runtime ?? 'python3';
  const kind = opts.kind ?? 'structure';
  const now = new Date();
  const structureId = randomUUID();
  const deploymentId = randomUUID();
  const buildPath = path.join(config.buildDir, deploymentId);
  const workDir = path.join(buildPath, 'src');
  for (const [rel, text] of Object.entries(opts.files)) {
    fs.mkdirSync(path.dirname(path.join(workDir, rel)), { recursive: true });
    fs.writeFileSync(path.join(workDir, rel), text);
  }
  await writeManifest(buildPath, {
    version: 1,
    runtime,
    workDir,
    interpreter: runtime === 'python3' ? python3() : process.execPath,
    mainFile: opts.mainFile ?? (runtime === 'python3' ? 'structure.py' : 'structure.mjs'),
    ...(kind === 'function' ? { handler: opts.handler ?? 'handler' } : {}),
    ...(kind === 'tool' ? { tool: { initToolFile: opts.mainFile ?? 'tool.py', initToolFunction: 'init_tool' } } : {}),
  });
  await ds.getRepository(CodeResource).save({
    resource_id: structureId,
    kind,
    organization_id: organizationId,
    name: opts.name ?? `test ${kind}`,
    description: '',
    code: { default: {} },
    config_file: null,
    env_vars: opts.envVars ?? [],
    webhook_enabled: opts.webhookEnabled ?? false,
    latest_deployment_id: deploymentId,
    created_by: 'test',
    created_at: now,
    updated_at: now,
  });
  await ds.getRepository(Deployment).save({
    deployment_id: deploymentId,
    organization_id: organizationId,
    resource_id: structureId,
    resource_kind: kind,
    status: 'SUCCEEDED',
    status_detail: null,
    code_source: { default: {} },
    build_path: buildPath,
    created_by: 'test',
    created_at: now,
    updated_at: now,
    completed_at: now,
  });
  return { structureId, deploymentId, buildPath };
}

/** A structure with no deployment at all (runs of it answer 409). */
export async function structureWithoutBuild(
  organizationId: string,
  kind: 'structure' | 'function' | 'tool' = 'structure',
): Promise<string> {
  const now = new Date();
  const structureId = randomUUID();
  await getStack()
    .ds.getRepository(CodeResource)
    .save({
      resource_id: structureId,
      kind,
      organization_id: organizationId,
      name: 'undeployed',
      description: '',
      code: { default: {} },
      config_file: null,
      env_vars: [],
      webhook_enabled: true,
      latest_deployment_id: null,
      created_by: 'test',
      created_at: now,
      updated_at: now,
    });
  return structureId;
}

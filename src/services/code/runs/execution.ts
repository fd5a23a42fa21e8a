// Everything a run's process needs before it can start: the deployment's build, the command, the
// environment (secret refs resolved) and the run's own credential. Problems that retrying cannot fix are
// RunSetupErrors: the run ends ERROR with their message.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import type { Config } from '../../../config';
import { CodeResource, Deployment, Organization, Run } from '../../../persistence/entities';
import type { EnvVar } from '../../../persistence/entities/code-resource';
import { BuildManifest, functionCommand, mainCommand, toolCommand } from '../../../runtime/manifest';
import { BuildUnreadable, manifestOfBuild } from './build-cache';
import { BuildArtifactRefused } from '../../../runtime/build/artifact-unpack';
import type { LocalBuilds } from '../../../runtime/build/local-builds';
import { hasVar, NamedValue, processEnvironment } from '../../../runtime/process/process-env';
import { functionShim, Shim, toolShim } from '../../../runtime/shims';
import { RESULT_FD } from '../../../runtime/process/result-channel';
import type { SecretBox } from '../../../security/secret-box';
import { createApiKey } from '../../accounts/accounts';
import { isUuid } from '../../../ids';
import { currentTraceparent } from '../../../observability/tracing';
import { findJoinedPrepared } from '../../../persistence/direct-sql';

export class RunSetupError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** Directory name prefix of a run's private HOME under the OS temp directory. */
export const RUN_HOME_PREFIX = 'tarmac-run-';

/** Values of `secret_ref` variables (secret ids of the run's organization) replaced by the secrets' values. */
export async function resolveEnvVars(
  ds: DataSource,
  box: SecretBox,
  organizationId: string,
  vars: EnvVar[],
  /** What the variables are, in messages. */
  what = 'Env var',
): Promise<NamedValue[]> {
  const refs = vars.filter((v) => (v.source ?? 'manual').toLowerCase() === 'secret_ref');
  const bad = refs.find((v) => !isUuid(v.value));
  if (bad)
    throw new RunSetupError(
      'SecretNotFound',
      `${what} ${bad.name} refers to ${JSON.stringify(bad.value)}, which is not a secret id`,
    );
  const ids = [...new Set(refs.map((v) => v.value.toLowerCase()))];
  const secrets = new Map<string, string>();
  if (ids.length) {
    // UPDATE ... RETURNING answers [rows, count] through TypeORM.
    const [rows]: [Array<{ secret_id: string; value_encrypted: Buffer }>, number] = await ds.query(
      `UPDATE secrets SET last_used = now() WHERE organization_id = $1 AND secret_id = ANY($2::uuid[]) RETURNING secret_id, value_encrypted`,
      [organizationId, ids],
    );
    for (const r of rows) secrets.set(r.secret_id, box.open(r.value_encrypted, r.secret_id));
  }
  return vars.map((v) => {
    if ((v.source ?? 'manual').toLowerCase() !== 'secret_ref') return { name: v.name, value: v.value };
    const value = secrets.get(v.value.toLowerCase());
    if (value === undefined)
      throw new RunSetupError('SecretNotFound', `${what} ${v.name} refers to secret ${v.value}, which does not exist`);
    return { name: v.name, value };
  });
}

export interface PreparedExecution {
  manifest: BuildManifest;
  command: { file: string; argv: string[]; cwd: string };
  env: Record<string, string>;
  /** The run's private HOME/TMPDIR; the caller removes it. */
  home: string;
  /** The deployment's build directory (read-only to the run). */
  buildPath: string;
  /** Lets this worker's build cache evict the build again once the run ended; the caller calls it. */
  releaseBuild: () => void;
  /** The run's organization's sandbox_index: its user code runs in that organization's group. */
  sandboxIndex: number;
  /** Files the platform wrote into `home` for the process to read (shims, inputs). */
  inputFiles: string[];
  /** Function and tool runs: the shim writes the handler's result / the artifact to the result pipe (RESULT_FD). */
  returnsResult: boolean;
}

/** A run with the records its execution reads: its resource, its deployment and its organization. */
export interface ExecutionRecords {
  run: Run;
  resource: CodeResource | null;
  deployment: Deployment | null;
  organization: Organization | null;
}

/** The run `runId` and the records of its execution, in one statement; null when the run does not exist. */
export async function readExecution(ds: DataSource, runId: string): Promise<ExecutionRecords | null> {
  const read = await findJoinedPrepared<
    Run,
    { resource: CodeResource; deployment: Deployment; organization: Organization }
  >(
    ds,
    Run,
    { run_id: runId },
    {
      resource: { entity: CodeResource, key: 'resource_id', by: 'resource_id' },
      deployment: { entity: Deployment, key: 'deployment_id', by: 'deployment_id' },
      organization: { entity: Organization, key: 'organization_id', by: 'organization_id' },
    },
  );
  return read && { run: read.record, ...read.joined };
}

/**
 * This worker's copy of the deployment's build: fetched into its local build cache when the deployment
 * recorded an artifact (local-builds.ts), else build_path itself (built before artifacts: a shared BUILD_DIR).
 */
async function localBuildOf(
  builds: LocalBuilds,
  deployment: Deployment & { build_path: string },
  organization: Organization,
): Promise<{ buildPath: string; release: () => void }> {
  const { deployment_id: id, build_artifact_key: key, build_sha256: sha256 } = deployment;
  if (!key || !sha256) return { buildPath: deployment.build_path, release: () => undefined };
  // A build names its own absolute paths (manifest, venv): it runs where it was built.
  if (deployment.build_path !== builds.pathOf(id))
    throw new RunSetupError(
      'BuildUnavailable',
      `The build of deployment ${id} was made in ${path.dirname(deployment.build_path)}, not this worker's BUILD_DIR; every worker needs the same BUILD_DIR`,
    );
  try {
    const size = Number(deployment.build_artifact_bytes);
    const held = await builds.use(id, { key, sha256, size }, organization.sandbox_index);
    return { buildPath: held.path, release: held.release };
  } catch (err) {
    if (!(err instanceof BuildArtifactRefused)) throw err;
    throw new RunSetupError(err.reason, `The build of deployment ${id} could not be used: ${err.message}`);
  }
}

/** The run's resource, its deployment's build (manifest.json, read once per build: build-cache.ts) and organization. */
async function buildOf(
  builds: LocalBuilds,
  { run, resource, deployment, organization }: ExecutionRecords,
): Promise<{
  resource: CodeResource;
  manifest: BuildManifest;
  buildPath: string;
  releaseBuild: () => void;
  organization: Organization;
}> {
  if (!resource)
    throw new RunSetupError(
      `${run.kind[0].toUpperCase()}${run.kind.slice(1)}NotFound`,
      `The ${run.kind} of this run no longer exists`,
    );
  if (!deployment?.build_path) throw new RunSetupError('BuildUnavailable', 'The deployment of this run has no build');
  if (!organization) throw new RunSetupError('OrganizationNotFound', 'The organization of this run no longer exists');
  const { buildPath, release } = await localBuildOf(
    builds,
    deployment as Deployment & { build_path: string },
    organization,
  );
  try {
    return { resource, manifest: await manifestOfBuild(buildPath), buildPath, releaseBuild: release, organization };
  } catch (err) {
    release();
    if (!(err instanceof BuildUnreadable)) throw err;
    throw new RunSetupError(
      'BuildUnavailable',
      `The build of deployment ${deployment.deployment_id} ${err.what}: ${err.message}`,
    );
  }
}

/**
 * Prepares the process of the run of `records` (readExecution); creates its credential (unless its env vars
 * bring GT_CLOUD_API_KEY).
 */
export async function prepareExecution(
  deps: { ds: DataSource; box: SecretBox; config: Config; builds: LocalBuilds },
  records: ExecutionRecords,
): Promise<PreparedExecution> {
  const build = await buildOf(deps.builds, records);
  try {
    return await prepareWithBuild(deps, records, build);
  } catch (err) {
    build.releaseBuild();
    throw err;
  }
}

async function prepareWithBuild(
  deps: { ds: DataSource; box: SecretBox; config: Config },
  records: ExecutionRecords,
  build: Awaited<ReturnType<typeof buildOf>>,
): Promise<PreparedExecution> {
  const { run } = records;
  const { resource, manifest, buildPath, releaseBuild, organization } = build;
  const declared = [...(resource.env_vars ?? []), ...(run.env_vars ?? [])];
  // The credential does not wait for the secrets (nor they for it): a run that then fails its setup ends, and
  // its end deletes the run's keys (finishRun).
  const [resourceVars, runVars, runApiKey] = await Promise.all([
    resolveEnvVars(deps.ds, deps.box, run.organization_id, resource.env_vars ?? []),
    resolveEnvVars(deps.ds, deps.box, run.organization_id, run.env_vars ?? []),
    hasVar(declared, 'GT_CLOUD_API_KEY')
      ? undefined
      : createApiKey(deps.ds, {
          organizationId: run.organization_id,
          userId: null,
          name: `run ${run.run_id}`,
          createdBy: run.created_by,
          runId: run.run_id,
        }).then((created) => created.value),
  ]);
  const vars = [...resourceVars, ...runVars];
  const home = await fs.mkdtemp(path.join(os.tmpdir(), `${RUN_HOME_PREFIX}${run.run_id.slice(0, 8)}-`));
  // Sandboxed, the process sees its files through bind mounts made as its own uid: it may pass through
  // this directory to them, never list it.
  await fs.chmod(home, 0o711);
  let command = mainCommand(manifest, run.args);
  let returnsResult = false;
  const inputFiles: string[] = [];
  const writeInput = async (file: string, content: string) => {
    await fs.writeFile(file, content, { mode: 0o644 });
    inputFiles.push(file);
  };
  /** Writes the shim and its companions; answers the path of the shim to run. */
  const writeShim = async ([main, ...companions]: Shim) => {
    for (const f of companions) await writeInput(path.join(home, f.fileName), f.source);
    await writeInput(path.join(home, main.fileName), main.source);
    return path.join(home, main.fileName);
  };
  if (run.kind === 'function') {
    // The shim and the event live in HOME (the build directory is immutable and shared by runs).
    const files = {
      shim: await writeShim(functionShim(manifest.runtime)),
      input: path.join(home, 'function-input.json'),
      result: RESULT_FD,
    };
    await writeInput(files.input, JSON.stringify(run.input ?? { body: null, query_params: {} }));
    command = functionCommand(manifest, files);
    returnsResult = true;
  } else if (run.kind === 'tool') {
    const input = (run.input ?? {}) as { describe?: boolean; activity?: string; params?: unknown };
    const files = {
      shim: await writeShim(toolShim(manifest.runtime)),
      params: path.join(home, 'tool-params.json'),
      result: RESULT_FD,
    };
    await writeInput(files.params, JSON.stringify(input.params ?? {}));
    command = toolCommand(
      manifest,
      files,
      input.activity !== undefined && !input.describe ? { activity: input.activity } : { describe: true },
    );
    returnsResult = true;
  }
  return {
    manifest,
    command,
    buildPath,
    releaseBuild,
    sandboxIndex: organization.sandbox_index,
    inputFiles,
    returnsResult,
    env: processEnvironment({
      runtime: manifest.runtime,
      interpreter: manifest.interpreter,
      home,
      vars,
      baseUrl: deps.config.runProcess.apiBaseUrl,
      runId: run.run_id,
      attempt: run.attempt,
      runApiKey,
      bucketId: organization.default_bucket_id,
      traceparent: currentTraceparent(),
    }),
    home,
  };
}

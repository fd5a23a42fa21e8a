// The griptape config file (structure_config.yaml, function_config.yaml, tool_config.yaml): read, checked
// and resolved to absolute paths inside the source. Unknown keys (e.g. build.cache_build_dependencies)
// are accepted and ignored, so configs written for the hosted service deploy unchanged.
import fs from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import type { CodeResourceKind } from '../../persistence/entities/code-resource';
import { DeploymentFailure } from './failure';
import { requireFile, resolveInSource } from './source-paths';
import { readUntrustedFile, UntrustedFileError } from '../untrusted-file';

/** Config files are a few lines of YAML. */
const MAX_CONFIG_BYTES = 1024 * 1024;

export const DEFAULT_CONFIG_FILE: Record<CodeResourceKind, string> = {
  structure: 'structure_config.yaml',
  function: 'function_config.yaml',
  tool: 'tool_config.yaml',
};

export interface DeployConfig {
  runtime: 'python3' | 'nodejs';
  /** As written (e.g. "3.12"); recorded, not enforced: the machine's python3 / node builds and runs. */
  runtimeVersion?: string;
  /** The config file's directory: the work directory of runs. */
  workDir: string;
  build: { preBuildInstallScript?: string; requirementsFile?: string; postBuildInstallScript?: string };
  /** Absolute paths inside the source. */
  mainFile: string;
  runAsModule: boolean;
  tool?: { initToolFile: string; initToolFunction: string };
  /** Functions: `run.handler`, the function of the main file that is called (default `handler`). */
  handler?: string;
}

const invalid = (file: string, message: string) => new DeploymentFailure('InvalidConfig', `${file}: ${message}`);

function optionalString(obj: Record<string, unknown>, key: string, file: string, where: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value.trim() === '')
    throw invalid(file, `${where}${key} must be a non-empty string`);
  return value;
}

function section(doc: Record<string, unknown>, key: string, file: string, required: boolean): Record<string, unknown> {
  const value = doc[key];
  if (value === undefined || value === null) {
    if (required) throw invalid(file, `\`${key}\` is required`);
    return {};
  }
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(file, `\`${key}\` must be a mapping`);
  return value as Record<string, unknown>;
}

/** Reads and checks the config file `configFile` (relative to the source root) for a resource of `kind`. */
export async function readDeployConfig(
  sourceRoot: string,
  configFile: string,
  kind: CodeResourceKind,
): Promise<DeployConfig> {
  const configPath = await resolveInSource(sourceRoot, sourceRoot, configFile.replace(/^\/+/, ''), 'The config file');
  // Links inside the source are allowed (resolveInSource checked where they lead); the file they lead to is
  // read as an untrusted file: a regular file only (never a FIFO), capped.
  let text: string;
  try {
    const realRoot = await fs.realpath(sourceRoot);
    const real = await fs.realpath(configPath);
    text = (await readUntrustedFile(realRoot, path.relative(realRoot, real), { maxBytes: MAX_CONFIG_BYTES })).toString(
      'utf8',
    );
  } catch (err) {
    if (err instanceof UntrustedFileError && err.problem !== 'missing')
      throw invalid(configFile, `refused: ${err.message.replace(/^[^ ]+ /, '')}`);
    throw new DeploymentFailure(
      'ConfigNotFound',
      `The config file ${JSON.stringify(configFile)} was not found in the source`,
    );
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw invalid(configFile, `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw invalid(configFile, 'must be a YAML mapping');
  const top = doc as Record<string, unknown>;

  const version = top.version;
  if (version === undefined) throw invalid(configFile, '`version` is required (only 1.0 is supported)');
  if (!(version === 1 || version === '1.0' || version === '1'))
    throw invalid(configFile, `version ${JSON.stringify(version)} is not supported (only 1.0)`);
  const runtime = top.runtime;
  if (runtime !== 'python3' && runtime !== 'nodejs') throw invalid(configFile, '`runtime` must be python3 or nodejs');
  const runtimeVersion = optionalString(top, 'runtime_version', configFile, '');

  const workDir = path.dirname(configPath);
  const inSource = (given: string, what: string) => resolveInSource(sourceRoot, workDir, given, what);
  const build = section(top, 'build', configFile, false);
  const run = section(top, 'run', configFile, true);
  const buildPaths: DeployConfig['build'] = {};
  for (const [key, field] of [
    ['pre_build_install_script', 'preBuildInstallScript'],
    ['requirements_file', 'requirementsFile'],
    ['post_build_install_script', 'postBuildInstallScript'],
  ] as const) {
    const given = optionalString(build, key, configFile, 'build.');
    if (given === undefined) continue;
    const resolved = await inSource(given, `build.${key}`);
    await requireFile(resolved, given, `build.${key}`);
    buildPaths[field] = resolved;
  }

  const runAsModule = run.run_as_module === true;
  let mainGiven: string | undefined;
  let tool: DeployConfig['tool'];
  if (kind === 'tool') {
    mainGiven = optionalString(run, 'tool_file', configFile, 'run.');
    if (!mainGiven) throw invalid(configFile, '`run.tool_file` is required');
    const initGiven = optionalString(run, 'init_tool_file', configFile, 'run.') ?? mainGiven;
    const initFile = await inSource(initGiven, 'run.init_tool_file');
    await requireFile(initFile, initGiven, 'run.init_tool_file');
    tool = {
      initToolFile: path.relative(workDir, initFile),
      initToolFunction: optionalString(run, 'init_tool_function', configFile, 'run.') ?? 'init_tool',
    };
  } else {
    mainGiven = optionalString(run, 'main_file', configFile, 'run.');
    if (!mainGiven) throw invalid(configFile, '`run.main_file` is required');
  }
  let handler: string | undefined;
  if (kind === 'function') {
    handler = optionalString(run, 'handler', configFile, 'run.') ?? 'handler';
    // An identifier: it is passed as an argv string and looked up as an attribute/export, never evaluated.
    if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(handler)) throw invalid(configFile, '`run.handler` must be a function name');
  }
  const mainFile = await inSource(mainGiven, kind === 'tool' ? 'run.tool_file' : 'run.main_file');
  await requireFile(mainFile, mainGiven, kind === 'tool' ? 'run.tool_file' : 'run.main_file');
  return {
    runtime,
    runtimeVersion,
    workDir,
    build: buildPaths,
    mainFile,
    runAsModule,
    tool,
    ...(handler ? { handler } : {}),
  };
}

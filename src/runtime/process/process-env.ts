// The environment of a user process: a small fixed base, the resource's and the run's variables, and the
// platform's GT_CLOUD_* variables. Nothing of the worker's own environment (DATABASE_URL, SECRETS_KEY, ...)
// is inherited: the process gets exactly what is built here.
import path from 'node:path';

export const SAFE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface NamedValue {
  name: string;
  value: string;
}

export const hasVar = (vars: NamedValue[], name: string) => vars.some((v) => v.name === name);

export function processEnvironment(input: {
  runtime: 'python3' | 'nodejs';
  interpreter: string;
  /** A directory of this run only, removed when it ends. */
  home: string;
  /** Already resolved (secret refs replaced by their values), in order: the resource's, then the run's. */
  vars: NamedValue[];
  baseUrl: string;
  runId: string;
  /** The run's attempt (its retry policy's, from 1): TARMAC_RUN_ATTEMPT. */
  attempt?: number;
  /** The run's own credential; absent when `vars` set GT_CLOUD_API_KEY themselves. */
  runApiKey?: string;
  /** The organization's default bucket: GT_CLOUD_BUCKET_ID (griptape's file manager driver) unless `vars` set it. */
  bucketId?: string;
  /** W3C trace context of the run's activity span: the program's own spans join the run's trace. */
  traceparent?: string;
}): Record<string, string> {
  const env: Record<string, string> = {
    // The interpreter's directory first, so `python`/`pip` of the deployment's venv (or `node`) are found.
    PATH: `${path.dirname(input.interpreter)}:${SAFE_PATH}`,
    HOME: input.home,
    TMPDIR: input.home,
    LANG: 'C.UTF-8',
  };
  // Without it Python block-buffers a piped stdout: lines would arrive late and out of order with stderr.
  if (input.runtime === 'python3') env.PYTHONUNBUFFERED = '1';
  for (const v of input.vars) env[v.name] = v.value;
  env.GT_CLOUD_BASE_URL = input.baseUrl;
  env.GT_CLOUD_STRUCTURE_RUN_ID = input.runId;
  env.TARMAC_RUN_ATTEMPT = String(input.attempt ?? 1);
  if (input.runApiKey !== undefined && !hasVar(input.vars, 'GT_CLOUD_API_KEY')) env.GT_CLOUD_API_KEY = input.runApiKey;
  if (input.bucketId !== undefined && !hasVar(input.vars, 'GT_CLOUD_BUCKET_ID'))
    env.GT_CLOUD_BUCKET_ID = input.bucketId;
  if (input.traceparent !== undefined && !hasVar(input.vars, 'TRACEPARENT')) env.TRACEPARENT = input.traceparent;
  return env;
}

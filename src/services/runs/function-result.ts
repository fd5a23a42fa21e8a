// How a function run ended, from its process's ending and the shim's result file: the handler's JSON result
// becomes the run's output; `{error: {type, message}}` (handler raised, load error) becomes the FAILED message.
import fs from 'node:fs/promises';
import type { RunEnding } from './lifecycle';

/**
 * Results travel in the workflow's history (activity result → terminal write), so they are bounded well
 * below Temporal's 2 MiB payload limit.
 */
export const MAX_FUNCTION_RESULT_BYTES = 1024 * 1024;

export async function functionEnding(processEnding: RunEnding, resultFile: string): Promise<RunEnding> {
  if ('error' in processEnding || processEnding.status === 'CANCELLED') return processEnding;
  let text: string;
  try {
    const stat = await fs.stat(resultFile);
    if (stat.size > MAX_FUNCTION_RESULT_BYTES) {
      return {
        status: 'ERROR',
        reason: 'ResultTooLarge',
        error: `The handler's result is ${stat.size} bytes; the limit is ${MAX_FUNCTION_RESULT_BYTES}`,
      };
    }
    text = await fs.readFile(resultFile, 'utf8');
    // The file is created empty before the run (a sandboxed process may only write into it).
    if (text === '') throw new Error('no result');
  } catch {
    // Killed, or exited (e.g. sys.exit() in the handler) before the shim wrote anything.
    return processEnding.status === 'SUCCEEDED'
      ? { status: 'FAILED', exitCode: 0, message: 'The function exited without a result' }
      : processEnding;
  }
  let result: unknown;
  try {
    result = JSON.parse(text);
  } catch {
    return { status: 'FAILED', exitCode: processEnding.exitCode, message: "The function's result is not valid JSON" };
  }
  if (processEnding.status === 'SUCCEEDED') return { ...processEnding, output: result };
  const error = (result as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  const message = error ? `${String(error.type ?? 'Error')}: ${String(error.message ?? '')}` : processEnding.message;
  return { ...processEnding, message };
}

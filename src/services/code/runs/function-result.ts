// How a function (or tool) run ended, from its process's ending and what the shim wrote to the result pipe
// (src/runtime/process/result-channel.ts): the handler's JSON result becomes the run's output;
// `{error: {type, message}}` (handler raised, load error) becomes the FAILED message.
import type { ResultBytes } from '../../../runtime/process/result-channel';
import type { RunEnding } from './lifecycle';

/**
 * `limitBytes` is RUN_RESULT_LIMIT_BYTES: results travel in the workflow's history (activity result →
 * terminal write), so the setting is bounded below Temporal's 2 MiB payload limit.
 */
export function functionEnding(
  processEnding: RunEnding,
  result: ResultBytes | undefined,
  limitBytes: number,
): RunEnding {
  if ('error' in processEnding || processEnding.status === 'CANCELLED') return processEnding;
  if (result && 'tooLarge' in result) {
    return {
      status: 'ERROR',
      reason: 'ResultTooLarge',
      error: `The handler's result is larger than the limit of ${limitBytes} bytes (RUN_RESULT_LIMIT_BYTES)`,
    };
  }
  const text = result?.bytes.toString('utf8') ?? '';
  if (text === '') {
    // Killed, or exited (e.g. sys.exit() in the handler) before the shim wrote anything.
    return processEnding.status === 'SUCCEEDED'
      ? { status: 'FAILED', exitCode: 0, message: 'The function exited without a result' }
      : processEnding;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { status: 'FAILED', exitCode: processEnding.exitCode, message: "The function's result is not valid JSON" };
  }
  if (processEnding.status === 'SUCCEEDED') return { ...processEnding, output: parsed };
  const error = (parsed as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  const message = error ? `${String(error.type ?? 'Error')}: ${String(error.message ?? '')}` : processEnding.message;
  return { ...processEnding, message };
}

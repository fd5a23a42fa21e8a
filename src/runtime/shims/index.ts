// The programs that run one function invocation, kept as TypeScript strings because the image ships only
// the compiled dist/ (a .py/.mjs next to the sources would be missing there). A function run writes the one
// for its runtime into its private HOME and runs it:
//   <interpreter> <shim> <main_file> <handler_name> <input_json_file> <result_json_file>
// Exit codes: 0 ok, 1 the handler raised, 2 the handler could not be loaded. The result file holds the
// JSON result, or {"error": {type, message}}.

/** Exit code of a shim whose handler could not be loaded (missing file, syntax error, no such function). */
export const SHIM_LOAD_ERROR_EXIT = 2;

export const PYTHON_FUNCTION_RUNNER = `"""Runs one function invocation (python3 runtime).

usage: python function_runner.py <main_file> <handler_name> <input_json_file> <result_json_file>

Imports <main_file> (relative to the working directory), calls <handler_name>(event) with
event = {"body": ..., "query_params": {...}} and writes the JSON-encoded return value to
<result_json_file>. A handler may be a coroutine function. stdout and stderr become the run's logs.
Exit codes: 0 ok, 1 the handler raised, 2 the handler could not be loaded.
"""
import asyncio
import importlib.util
import inspect
import json
import os
import sys
import traceback


def fail(result_path, code, kind, message):
    with open(result_path, "w") as f:
        json.dump({"error": {"type": kind, "message": message}}, f)
    sys.exit(code)


def main():
    main_file, handler_name, input_path, result_path = sys.argv[1:5]
    sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.spec_from_file_location("function_main", os.path.abspath(main_file))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - any import-time error is the user's to see
        traceback.print_exc()
        fail(result_path, 2, "LoadError", f"{type(exc).__name__}: {exc}")
    handler = getattr(module, handler_name, None)
    if not callable(handler):
        fail(result_path, 2, "LoadError", f"{main_file} defines no function named {handler_name!r}")
    with open(input_path) as f:
        event = json.load(f)
    try:
        result = handler(event)
        if inspect.isawaitable(result):
            result = asyncio.run(result)
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        fail(result_path, 1, type(exc).__name__, str(exc))
    with open(result_path, "w") as f:
        json.dump(result, f, default=str)


if __name__ == "__main__":
    main()
`;

export const NODE_FUNCTION_RUNNER = `// Runs one function invocation (nodejs runtime).
//
// usage: node function_runner.mjs <main_file> <handler_name> <input_json_file> <result_json_file>
//
// Imports <main_file> (CommonJS or ES module, relative to the working directory), calls its export
// <handler_name>(event) with event = {body, query_params}, awaits it, and writes the JSON-encoded result to
// <result_json_file>. Exit codes: 0 ok, 1 the handler threw, 2 the handler could not be loaded.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mainFile, handlerName, inputPath, resultPath] = process.argv.slice(2);

function fail(code, type, message) {
  fs.writeFileSync(resultPath, JSON.stringify({ error: { type, message } }));
  process.exit(code);
}

let mod;
try {
  mod = await import(pathToFileURL(path.resolve(mainFile)).href);
} catch (err) {
  console.error(err);
  fail(2, 'LoadError', \`\${err?.name ?? 'Error'}: \${err?.message ?? err}\`);
}
const handler = mod[handlerName] ?? mod.default?.[handlerName] ?? (handlerName === 'default' ? mod.default : undefined);
if (typeof handler !== 'function') fail(2, 'LoadError', \`\${mainFile} exports no function named \${JSON.stringify(handlerName)}\`);

const event = JSON.parse(fs.readFileSync(inputPath, 'utf8'));
try {
  const result = await handler(event);
  fs.writeFileSync(resultPath, JSON.stringify(result === undefined ? null : result));
} catch (err) {
  console.error(err);
  fail(1, err?.name ?? 'Error', String(err?.message ?? err));
}
`;

/** File name and text of the shim of `runtime` (the .mjs extension makes node treat it as an ES module). */
export function functionRunner(runtime: 'python3' | 'nodejs'): { fileName: string; source: string } {
  return runtime === 'python3'
    ? { fileName: 'function_runner.py', source: PYTHON_FUNCTION_RUNNER }
    : { fileName: 'function_runner.mjs', source: NODE_FUNCTION_RUNNER };
}

// The programs that run one function invocation, kept as TypeScript strings because the image ships only
// the compiled dist/ (a .py/.mjs next to the sources would be missing there). A function run writes the one
// for its runtime into its private HOME and runs it:
//   <interpreter> <shim> <main_file> <handler_name> <input_json_file> <result_json_file>
// Exit codes: 0 ok, 1 the handler raised, 2 the handler could not be loaded. The result file holds the
// JSON result, or {"error": {type, message}}.

/** Exit code of a shim whose handler could not be loaded (missing file, syntax error, no such function). */
export const SHIM_LOAD_ERROR_EXIT = 2;

/** Shared by both Python shims (each is a standalone file written into the run's HOME). */
const PYTHON_LOAD_MODULE = `def load_module(file_path, fallback_name):
    """Imports a file as a module registered in sys.modules before it runs: attrs, dataclasses and inspect
    (griptape's BaseTool) look a class's module up there. Named after the file unless that name is taken."""
    name = os.path.splitext(os.path.basename(file_path))[0]
    if not name.isidentifier() or name in sys.modules:
        name = fallback_name
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(file_path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
`;

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

${PYTHON_LOAD_MODULE}

def main():
    main_file, handler_name, input_path, result_path = sys.argv[1:5]
    sys.path.insert(0, os.getcwd())
    try:
        module = load_module(main_file, "function_main")
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

export const PYTHON_TOOL_RUNNER = `"""Runs one tool invocation (python3 runtime).

usage: python tool_runner.py <init_tool_file> <init_tool_function> <result_json_file> describe
       python tool_runner.py <init_tool_file> <init_tool_function> <result_json_file> run <activity> <params_json_file>

Imports <init_tool_file> (relative to the working directory) and calls <init_tool_function>() for the tool.
describe writes {"name", "activities": [{"name", "description", "schema"}]}: a griptape BaseTool's @activity
methods, else the object's public methods (docstring as description, schema {"type": "object"}).
run calls the activity with the params (griptape: {"values": params}; plain: params) and writes the result as
an artifact dict (griptape artifacts: to_dict(); dicts as they are; anything else a TextArtifact of str(x)).
Exit codes: 0 ok, 1 the activity raised, 2 the tool could not be loaded or has no such activity.
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

${PYTHON_LOAD_MODULE}

def griptape_activities(tool):
    try:
        from griptape.tools import BaseTool
    except Exception:  # noqa: BLE001 - griptape is optional
        return None
    if not isinstance(tool, BaseTool):
        return None
    out = []
    for a in tool.activities():
        schema = {"type": "object"}
        try:
            s = tool.activity_schema(a)
            if s is not None:
                schema = s.json_schema("Schema") if hasattr(s, "json_schema") else s
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        out.append({"name": tool.activity_name(a), "description": tool.activity_description(a) or "", "schema": schema})
    return out


def plain_activities(tool):
    out = []
    for name in dir(tool):
        if name.startswith("_"):
            continue
        member = getattr(tool, name, None)
        if inspect.ismethod(member) or inspect.isfunction(member):
            out.append({"name": name, "description": inspect.getdoc(member) or "", "schema": {"type": "object"}})
    return out


def to_artifact(x):
    if hasattr(x, "to_dict") and callable(x.to_dict):
        return x.to_dict()
    if isinstance(x, dict):
        return x
    return {"type": "TextArtifact", "value": str(x)}


def main():
    init_file, init_function, result_path, mode = sys.argv[1:5]
    sys.path.insert(0, os.getcwd())
    try:
        module = load_module(init_file, "tool_init")
        init = getattr(module, init_function, None)
        if not callable(init):
            fail(result_path, 2, "LoadError", f"{init_file} defines no function named {init_function!r}")
        tool = init()
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - any load-time error is the user's to see
        traceback.print_exc()
        fail(result_path, 2, "LoadError", f"{type(exc).__name__}: {exc}")
    gt = griptape_activities(tool)
    activities = gt if gt is not None else plain_activities(tool)
    if mode == "describe":
        name = getattr(tool, "name", None) or type(tool).__name__
        with open(result_path, "w") as f:
            json.dump({"name": str(name), "activities": activities}, f, default=str)
        return
    activity, params_path = sys.argv[5:7]
    if activity not in [a["name"] for a in activities]:
        fail(result_path, 2, "UnknownActivity", f"The tool has no activity named {activity!r}")
    with open(params_path) as f:
        params = json.load(f)
    try:
        result = getattr(tool, activity)({"values": params} if gt is not None else params)
        if inspect.isawaitable(result):
            result = asyncio.run(result)
        artifact = to_artifact(result)
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        fail(result_path, 1, type(exc).__name__, str(exc))
    with open(result_path, "w") as f:
        json.dump(artifact, f, default=str)


if __name__ == "__main__":
    main()
`;

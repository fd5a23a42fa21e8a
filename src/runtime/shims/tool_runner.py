"""Runs one tool invocation (python3 runtime).

usage: python tool_runner.py <init_tool_file> <init_tool_function> <result_fd> describe
       python tool_runner.py <init_tool_file> <init_tool_function> <result_fd> run <activity> <params_json_file>

Imports <init_tool_file> (relative to the working directory) and calls <init_tool_function>() for the tool.
describe writes {"name", "activities": [{"name", "description", "schema"}]}: a griptape BaseTool's @activity
methods, else the object's public methods (docstring as description, schema {"type": "object"}).
run calls the activity with the params (griptape: {"values": params}; plain: params) and writes the result as
an artifact dict (griptape artifacts: to_dict(); dicts as they are; anything else a TextArtifact of str(x)).
Exit codes: 0 ok, 1 the activity raised, 2 the tool could not be loaded or has no such activity.
"""
import asyncio
import inspect
import json
import os
import sys
import traceback

from _tarmac_shim import fail, load_module, result_channel, write_result


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
    init_file, init_function, result_arg, mode = sys.argv[1:5]
    result_fd = result_channel(result_arg)
    sys.path.insert(0, os.getcwd())
    try:
        module = load_module(init_file, "tool_init")
        init = getattr(module, init_function, None)
        if not callable(init):
            fail(result_fd, 2, "LoadError", f"{init_file} defines no function named {init_function!r}")
        tool = init()
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - any load-time error is the user's to see
        traceback.print_exc()
        fail(result_fd, 2, "LoadError", f"{type(exc).__name__}: {exc}")
    gt = griptape_activities(tool)
    activities = gt if gt is not None else plain_activities(tool)
    if mode == "describe":
        name = getattr(tool, "name", None) or type(tool).__name__
        write_result(result_fd, {"name": str(name), "activities": activities})
        return
    activity, params_path = sys.argv[5:7]
    if activity not in [a["name"] for a in activities]:
        fail(result_fd, 2, "UnknownActivity", f"The tool has no activity named {activity!r}")
    with open(params_path) as f:
        params = json.load(f)
    try:
        result = getattr(tool, activity)({"values": params} if gt is not None else params)
        if inspect.isawaitable(result):
            result = asyncio.run(result)
        artifact = to_artifact(result)
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        fail(result_fd, 1, type(exc).__name__, str(exc))
    write_result(result_fd, artifact)


if __name__ == "__main__":
    main()

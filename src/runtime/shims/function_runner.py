"""Runs one function invocation (python3 runtime).

usage: python function_runner.py <main_file> <handler_name> <input_json_file> <result_fd>

Imports <main_file> (relative to the working directory), calls <handler_name>(event) with
event = {"body": ..., "query_params": {...}} and writes the JSON-encoded return value to the pipe
<result_fd>. A handler may be a coroutine function. stdout and stderr become the run's logs.
Exit codes: 0 ok, 1 the handler raised, 2 the handler could not be loaded.
"""
import asyncio
import inspect
import json
import os
import sys
import traceback

from _tarmac_shim import fail, load_module, result_channel, write_result


def main():
    main_file, handler_name, input_path, result_arg = sys.argv[1:5]
    result_fd = result_channel(result_arg)
    sys.path.insert(0, os.getcwd())
    try:
        module = load_module(main_file, "function_main")
    except Exception as exc:  # noqa: BLE001 - any import-time error is the user's to see
        traceback.print_exc()
        fail(result_fd, 2, "LoadError", f"{type(exc).__name__}: {exc}")
    handler = getattr(module, handler_name, None)
    if not callable(handler):
        fail(result_fd, 2, "LoadError", f"{main_file} defines no function named {handler_name!r}")
    with open(input_path) as f:
        event = json.load(f)
    try:
        result = handler(event)
        if inspect.isawaitable(result):
            result = asyncio.run(result)
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        fail(result_fd, 1, type(exc).__name__, str(exc))
    write_result(result_fd, result)


if __name__ == "__main__":
    main()

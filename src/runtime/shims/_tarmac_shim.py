"""What both Python shims share (written beside them into the run's HOME, imported before the user's
directory is put on sys.path, under a name no user module is likely to have)."""
import importlib.util
import json
import os
import sys


def result_channel(arg):
    """The result fd named on the command line (a pipe to the platform), kept from the user's subprocesses."""
    fd = int(arg)
    os.set_inheritable(fd, False)
    return fd


def write_result(result_fd, value):
    """Writes `value` as JSON to the result pipe and closes it. Past the platform's result limit the pipe is
    closed on the other side: the write fails (BrokenPipeError) and the run ends ResultTooLarge."""
    with os.fdopen(result_fd, "wb") as f:
        f.write(json.dumps(value, default=str).encode("utf-8"))


def fail(result_fd, code, kind, message):
    """Writes {"error": {type, message}} as the result and exits with `code`."""
    write_result(result_fd, {"error": {"type": kind, "message": message}})
    sys.exit(code)


def load_module(file_path, fallback_name):
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

"""What both Python shims share (written beside them into the run's HOME, imported before the user's
directory is put on sys.path, under a name no user module is likely to have)."""
import importlib.util
import json
import os
import sys


def fail(result_path, code, kind, message):
    """Writes {"error": {type, message}} as the result and exits with `code`."""
    with open(result_path, "w") as f:
        json.dump({"error": {"type": kind, "message": message}}, f)
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

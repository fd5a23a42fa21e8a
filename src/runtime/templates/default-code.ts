// The projects deployed for the `default` code location (and for resources created without `code`).
// Kept as TypeScript constants rather than files: tsc does not copy non-TS files into dist/, and the
// Docker image ships only dist/. Each uses nothing but python3's standard library.
import type { CodeResourceKind } from '../../persistence/entities/code-resource';

const STRUCTURE_PY = `"""The default structure: prints its arguments and reports them as its output.

Reports back like any structure: a FinishStructureRunEvent posted to
$GT_CLOUD_BASE_URL/api/structure-runs/$GT_CLOUD_STRUCTURE_RUN_ID/events with Bearer $GT_CLOUD_API_KEY.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request


def post_output(text):
    base = os.environ.get("GT_CLOUD_BASE_URL")
    run_id = os.environ.get("GT_CLOUD_STRUCTURE_RUN_ID")
    if not base or not run_id:
        return
    event = {
        "type": "FinishStructureRunEvent",
        "timestamp": time.time(),
        "payload": {
            "type": "FinishStructureRunEvent",
            "output_task_output": {"type": "TextArtifact", "value": text},
        },
    }
    body = json.dumps(event).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {os.environ.get('GT_CLOUD_API_KEY', '')}"}
    url = f"{base.rstrip('/')}/api/structure-runs/{run_id}/events"
    # 503 (the platform is briefly unavailable, e.g. its disk is full) and connection errors are retried,
    # after Retry-After or a backoff, for as long as the run lives: its time limit ends the wait.
    delay = 0.5
    while True:
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
            return
        except urllib.error.HTTPError as err:
            if err.code != 503:
                raise
            wait = err.headers.get("Retry-After", "")
            wait = min(float(wait), 30.0) if wait.isdigit() else delay
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            wait = delay
        print(f"event not posted yet (the platform is unavailable); retrying in {wait:.1f} s", file=sys.stderr)
        time.sleep(wait)
        delay = min(delay * 2, 10.0)


def main():
    args = sys.argv[1:]
    print(f"Hello from the default structure. Arguments: {args}")
    post_output(" ".join(args) if args else "Hello from the default structure")


if __name__ == "__main__":
    main()
`;

const FUNCTION_PY = `"""The default function: answers what it was given."""
import json
import sys


def handler(event):
    return {"message": "Hello from the default function", "input": event}


if __name__ == "__main__":
    print(json.dumps(handler({"body": sys.argv[1:], "query_params": {}})))
`;

const TOOL_PY = `"""The default tool: one activity, echo, that answers its text as a TextArtifact."""


class DefaultTool:
    name = "DefaultTool"

    def echo(self, params):
        """Answers params["text"]."""
        return {"type": "TextArtifact", "value": str((params or {}).get("text", ""))}


def init_tool():
    return DefaultTool()
`;

const config = (run: string) => `version: 1.0\nruntime: python3\nruntime_version: "3.11"\nrun:\n${run}`;

/** Files of the default project of each kind, by path relative to the source root. */
export const DEFAULT_PROJECTS: Record<CodeResourceKind, Record<string, string>> = {
  structure: { 'structure_config.yaml': config('  main_file: structure.py\n'), 'structure.py': STRUCTURE_PY },
  function: { 'function_config.yaml': config('  main_file: function.py\n'), 'function.py': FUNCTION_PY },
  tool: {
    'tool_config.yaml': config('  tool_file: tool.py\n  init_tool_file: tool.py\n  init_tool_function: init_tool\n'),
    'tool.py': TOOL_PY,
  },
};

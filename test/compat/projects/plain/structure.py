"""A structure with no dependencies: sleeps argv[1] seconds (default 0), prints, reports its arguments."""
import json
import os
import sys
import time
import urllib.request

args = sys.argv[1:]
time.sleep(float(args[0]) if args else 0)
print("structure ran with", json.dumps(args))
event = {
    "type": "FinishStructureRunEvent",
    "timestamp": time.time(),
    "payload": {"type": "FinishStructureRunEvent", "output_task_output": {"type": "TextArtifact", "value": " ".join(args)}},
}
request = urllib.request.Request(
    os.environ["GT_CLOUD_BASE_URL"].rstrip("/") + f"/api/structure-runs/{os.environ['GT_CLOUD_STRUCTURE_RUN_ID']}/events",
    data=json.dumps(event).encode(),
    headers={"Content-Type": "application/json", "Authorization": f"Bearer {os.environ['GT_CLOUD_API_KEY']}"},
)
urllib.request.urlopen(request, timeout=30).read()

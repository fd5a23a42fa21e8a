"""Helpers of the compat suite: the stack's address and keys (from compat.test.ts), the generated client, and
calls through it that must succeed and parse."""
from __future__ import annotations

import importlib
import io
import json
import os
import time
import zipfile
from pathlib import Path

import httpx
from griptape_cloud_client import AuthenticatedClient, Client
from griptape_cloud_client.models import ClientErrorResponseContent, ServiceErrorResponseContent

BASE_URL = os.environ["TARMAC_BASE_URL"]  # the host root, as clients are given it
API_KEY = os.environ["TARMAC_API_KEY"]
MODEL = os.environ["TARMAC_MODEL"]  # the stack's scripted model (see compat.test.ts)
PROJECTS = Path(__file__).parent / "projects"

#: Operations (`<package>.<module>` of griptape_cloud_client.api) that answered and parsed.
COVERED: set[str] = set()


def client_for(key: str | None = API_KEY) -> Client:
    """The generated client with `key` (None: without one). A status it has no model for raises instead of parsing to None."""
    if key is None:
        return Client(base_url=BASE_URL, raise_on_unexpected_status=True, timeout=httpx.Timeout(120))
    return AuthenticatedClient(base_url=BASE_URL, token=key, raise_on_unexpected_status=True, timeout=httpx.Timeout(120))


def call(op: str, client: AuthenticatedClient, *args, **kwargs):
    """Calls api.<op> of the generated client; the answer must be a 2xx that its model parses. Answers the parsed model."""
    module = importlib.import_module(f"griptape_cloud_client.api.{op}")
    # The module's own request builder and parser (what sync_detailed does), so a failure can show the answer.
    response = client.get_httpx_client().request(**module._get_kwargs(*args, **kwargs))
    shown = f"{response.status_code} {response.text[:1500]}"
    assert 200 <= response.status_code < 300, f"{op} answered {shown}"
    try:
        parsed = module._build_response(client=client, response=response).parsed
    except Exception as exc:  # noqa: BLE001 - any parse failure is the finding
        raise AssertionError(f"{op}: the generated client cannot parse {shown}: {exc!r}") from exc
    assert not isinstance(parsed, (ClientErrorResponseContent, ServiceErrorResponseContent)), f"{op}: {shown}"
    COVERED.add(op)
    return parsed


def wait_until(what: str, probe, timeout: float = 120, interval: float = 0.3):
    """Calls probe() until it answers something truthy; fails after `timeout` seconds naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


def zip_project(name: str) -> bytes:
    """projects/<name> as a zip archive, the way users upload code to a bucket."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted((PROJECTS / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(PROJECTS / name).as_posix())
    return buffer.getvalue()


def raw(method: str, path: str, key: str = API_KEY, **kwargs) -> httpx.Response:
    """A plain HTTP call (what a driver does without the generated client)."""
    return httpx.request(method, f"{BASE_URL}{path}", headers={"Authorization": f"Bearer {key}"}, timeout=120, **kwargs)


def strict_events(text: str, model, run_key: str, run_id: str) -> list:
    """The `data:` lines of a run's event stream body, read as the clients read it (line by line, every other line
    skipped), each parsed strictly by `model` (the generated client's EventDetail or AssistantEventDetail: every
    required member present, with its type) and naming the run in `run_key`. Answers the parsed events."""
    events = []
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = model.from_dict(json.loads(line.removeprefix("data:").strip()))
        except Exception as exc:  # noqa: BLE001 - any parse failure is the finding
            raise AssertionError(f"a data line is no {model.__name__}: {line[:300]}: {exc!r}") from exc
        assert getattr(event, run_key) == run_id, f"{run_key} is not {run_id}: {line[:300]}"
        assert all(isinstance(v, str) for v in (event.event_id, event.type_, event.origin)), line[:300]
        assert isinstance(event.timestamp, (int, float)) and not isinstance(event.timestamp, bool), line[:300]
        events.append(event)
    assert events, "the stream sent no event"
    return events

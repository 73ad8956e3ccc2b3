"""Publish the configured Saxml models idempotently, and unpublish the ones removed from config.

Runs in the cluster as the publisher Job (`python3 saxml_reconcile.py`), standard library only,
so any pinned Python image will do. It receives the full desired list, never a diff:

1. wait until the Sax HTTP server answers `GET /`;
2. for every desired model, `GET /listcell`: absent -> `POST /publish`; present with another
   model path, checkpoint or replica count -> `PUT /update`; identical -> nothing;
3. for every model this publisher published before (its record) that is no longer desired and
   still listed -> `POST /unpublish`. Models published by hand are never touched;
4. write the record (the desired names) to a GCS object next to the admin server's own state,
   so it survives a rebuilt cluster exactly as the published models do;
5. optionally wait until each model's `active_replicas` reaches its `replicas`.

The record lives at STATE_URL (gs://BUCKET/OBJECT) and is read and written through the GCS JSON API
with the pod's Workload Identity token from the GKE metadata server.
Environment: SAX_HTTP, SAX_MODELS (JSON list of /publish bodies), STATE_URL, STORAGE_API,
METADATA_URL, READY_SECONDS, WAIT_SECONDS.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

METADATA_TOKEN_URL = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
POLL_SECONDS = 10


@dataclass(frozen=True)
class Action:
    kind: str  # publish, update, unpublish, keep
    model: str
    body: dict[str, Any]


def same(current: dict[str, Any], body: dict[str, Any]) -> bool:
    """Whether a /listcell answer already matches a /publish body."""
    path = current.get("model_path", current.get("path"))
    replicas = current.get("max_replicas", current.get("replicas"))
    return (
        path == body["model_path"]
        and str(current.get("checkpoint")) == str(body["checkpoint"])
        and replicas is not None
        and int(replicas) == int(body["replicas"])
    )


def plan_actions(
    desired: list[dict[str, Any]], managed: list[str], current: dict[str, dict[str, Any] | None]
) -> list[Action]:
    """What to do, from the desired bodies, this publisher's record and what /listcell reports."""
    actions = []
    for body in desired:
        found = current.get(body["model"])
        kind = "publish" if found is None else ("keep" if same(found, body) else "update")
        actions.append(Action(kind, body["model"], body))
    wanted = {body["model"] for body in desired}
    for name in managed:
        if name not in wanted and current.get(name) is not None:
            actions.append(Action("unpublish", name, {"model": name}))
    return actions


def _call(
    method: str, url: str, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None
) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    try:
        return status, json.loads(text or b"null")
    except ValueError:
        return status, text.decode(errors="replace")


class Sax:
    """The Sax HTTP server's API ([SAX-HTTP])."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def ready(self) -> bool:
        try:
            return _call("GET", f"{self.base}/")[0] == 200
        except OSError:
            return False

    def listcell(self, model: str) -> dict[str, Any] | None:
        status, answer = _call("GET", f"{self.base}/listcell", {"model": model})  # a GET with a JSON body
        return answer if status == 200 and isinstance(answer, dict) else None

    def apply(self, action: Action) -> None:
        method, path = {
            "publish": ("POST", "/publish"),
            "update": ("PUT", "/update"),
            "unpublish": ("POST", "/unpublish"),
        }[action.kind]
        status, answer = _call(method, f"{self.base}{path}", action.body)
        if status != 200:
            raise RuntimeError(f"{action.kind} {action.model} failed: HTTP {status} {answer}")


class Record:
    """The names this publisher manages, as a JSON object in GCS."""

    def __init__(self, storage_api: str, state_url: str, token: Callable[[], str]) -> None:
        bucket, _, self.object = state_url.removeprefix("gs://").partition("/")
        self.api, self.bucket, self.token = storage_api.rstrip("/"), bucket, token

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"}

    def load(self) -> list[str]:
        name = urllib.parse.quote(self.object, safe="")
        status, answer = _call("GET", f"{self.api}/storage/v1/b/{self.bucket}/o/{name}?alt=media", headers=self._auth())
        if status == 404:
            return []
        if status != 200 or not isinstance(answer, dict):
            raise RuntimeError(f"cannot read gs://{self.bucket}/{self.object}: HTTP {status} {answer}")
        return [str(name) for name in answer.get("managed", [])]

    def save(self, names: list[str]) -> None:
        query = urllib.parse.urlencode({"uploadType": "media", "name": self.object})
        raw = json.dumps({"managed": sorted(names)}).encode()
        status, answer = _call(
            "POST", f"{self.api}/upload/storage/v1/b/{self.bucket}/o?{query}", headers=self._auth(), raw=raw
        )
        if status != 200:
            raise RuntimeError(f"cannot write gs://{self.bucket}/{self.object}: HTTP {status} {answer}")


def metadata_token(url: str) -> Callable[[], str]:
    def token() -> str:
        status, answer = _call("GET", url, headers={"Metadata-Flavor": "Google"})
        if status != 200 or not isinstance(answer, dict):
            raise RuntimeError(f"no access token from the metadata server: HTTP {status}")
        return str(answer["access_token"])

    return token


def _wait(what: str, check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            print(f"gave up waiting for {what} after {seconds:.0f}s", flush=True)
            return False
        time.sleep(POLL_SECONDS)


def _loaded(sax: Sax, body: dict[str, Any]) -> bool:
    found = sax.listcell(body["model"])
    active = int((found or {}).get("active_replicas") or 0)
    print(f"{body['model']}: {active}/{body['replicas']} replicas loaded", flush=True)
    return active >= int(body["replicas"])


def reconcile(sax: Sax, record: Record, desired: list[dict[str, Any]], wait_seconds: float) -> list[Action]:
    """One pass; the record is written even when an action fails, so nothing published is forgotten."""
    managed = record.load()
    names = {body["model"] for body in desired} | set(managed)
    current = {name: sax.listcell(name) for name in sorted(names)}
    actions = plan_actions(desired, managed, current)
    wanted = {body["model"] for body in desired}
    now = {name for name in managed if name in wanted or current.get(name) is not None}  # drop names already gone
    try:
        for action in actions:
            print(f"{action.kind}: {action.model}", flush=True)
            if action.kind != "keep":
                sax.apply(action)
            if action.kind == "unpublish":
                now.discard(action.model)
            else:
                now.add(action.model)
    finally:
        record.save(sorted(now))
    for body in desired:
        if wait_seconds > 0 and not _wait(
            f"{body['model']} to load", lambda body=body: _loaded(sax, body), wait_seconds
        ):
            raise RuntimeError(f"{body['model']} did not load {body['replicas']} replicas in {wait_seconds:.0f}s")
    return actions


def main(environ: dict[str, str] | None = None) -> int:
    env = dict(os.environ if environ is None else environ)
    sax = Sax(env["SAX_HTTP"])
    if not _wait(f"the Sax HTTP server at {sax.base}", sax.ready, float(env.get("READY_SECONDS", "900"))):
        return 1
    record = Record(env["STORAGE_API"], env["STATE_URL"], metadata_token(env.get("METADATA_URL", METADATA_TOKEN_URL)))
    try:
        reconcile(sax, record, json.loads(env["SAX_MODELS"]), float(env.get("WAIT_SECONDS", "0")))
    except (RuntimeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 1
    print("published models are up to date", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

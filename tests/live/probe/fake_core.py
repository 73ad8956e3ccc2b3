"""A fake of the CoreV1Api calls `verify --probe` makes (create, read, list and delete namespaced pods).

It answers with the pinned client's own `V1Pod` models (kubernetes==37.0.2), built from the synthetic fixtures
in tools/live/tpu_stacks_live/fixtures/probe (hand-written from the Pod schema, each labelled `# synthetic:`),
and raises the client's `ApiException` where the API would. What a probe pod "reports" is chosen per check
by the test: `answers` maps a check-name prefix (the longest that fits wins) to the fixtures its successive reads return (the last repeats).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml
from kubernetes.client import ApiClient, V1Pod, V1PodList
from kubernetes.client.exceptions import ApiException

import tpu_stacks_live

FIXTURES = Path(tpu_stacks_live.__file__).parent / "fixtures" / "probe"
CHECK_ANNOTATION = "tpu-stacks.dev/probe-check"


def fixture(name: str) -> dict:
    return yaml.safe_load((FIXTURES / f"{name}.yaml").read_text())


def _matches(selector: str, labels: dict[str, str]) -> bool:
    """A label selector of `k=v` and `!k` terms (what the probe run sends)."""
    for term in filter(None, selector.split(",")):
        if term.startswith("!"):
            if term[1:] in labels:
                return False
        else:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
    return True


class FakeCoreV1:
    def __init__(self, answers: dict[str, list[str]], servers: list[dict] = (), refuse_create: set[str] = frozenset()):
        self.answers = answers
        self.servers = [copy.deepcopy(s) for s in servers]
        self.refuse_create = refuse_create
        self.pods: dict[tuple[str, str], dict] = {}
        self.created: list[dict] = []
        self.deleted: list[tuple[str, str]] = []
        self.reads: dict[tuple[str, str], int] = {}
        self.serializer = ApiClient()

    def _answer(self, body: dict) -> list[str]:
        check = body["metadata"]["annotations"][CHECK_ANNOTATION]
        for prefix in sorted(self.answers, key=len, reverse=True):  # the longest prefix that fits
            if check.startswith(prefix):
                return self.answers[prefix]
        raise AssertionError(f"the test gave no answer for {check}")

    def create_namespaced_pod(self, namespace: str, body: V1Pod) -> V1Pod:
        assert isinstance(body, V1Pod), "the probe sends the client's V1Pod model"
        sent = self.serializer.sanitize_for_serialization(body)
        assert sent["metadata"]["namespace"] == namespace
        if namespace in self.refuse_create:
            raise ApiException(
                status=403,
                reason="Forbidden",
                body=json.dumps(
                    {"message": f'pods is forbidden: User "verify" cannot create resource "pods" in "{namespace}"'}
                ),
            )
        key = (namespace, sent["metadata"]["name"])
        assert key not in self.pods, f"{key} created twice"
        self.pods[key] = sent
        self.created.append(sent)
        return V1Pod.from_dict(sent)

    def read_namespaced_pod(self, name: str, namespace: str) -> V1Pod:
        key = (namespace, name)
        if key not in self.pods:
            raise ApiException(status=404, reason="Not Found")
        names = self._answer(self.pods[key])
        count = self.reads[key] = self.reads.get(key, 0) + 1
        pod = fixture(names[min(count, len(names)) - 1])
        pod["metadata"] = copy.deepcopy(self.pods[key]["metadata"])
        return V1Pod.from_dict(pod)

    def list_namespaced_pod(self, namespace: str, label_selector: str = "") -> V1PodList:
        items = [
            s
            for s in self.servers
            if s["metadata"]["namespace"] == namespace and _matches(label_selector, s["metadata"].get("labels") or {})
        ]
        return V1PodList.from_dict({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": items})

    def delete_namespaced_pod(self, name: str, namespace: str, grace_period_seconds: int | None = None) -> None:
        key = (namespace, name)
        if key not in self.pods:
            raise ApiException(status=404, reason="Not Found")
        del self.pods[key]
        self.deleted.append(key)


class Clock:
    """Time that passes only when the run sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps = 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1

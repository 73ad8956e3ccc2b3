"""What the stack assumes, read from its offline plan: the Kubernetes objects it declares and the Google resources
(node pools, dashboards, alert policies) beside them.

The planner (tools/preview) runs the program in-process under Pulumi's mocks, in up mode so computed values are
filled and every object is complete; its `render_manifests` gives the objects as the provider would send them. The
checks decide what applies from these objects (a RayService, a Gateway, an HPA), never from the stack's name.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpu_stacks.errors import UserError
from tpu_stacks_preview.config import load_stack_config
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.monitoring import ALERT_POLICY, DASHBOARD, promql_metrics

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"


@dataclass(frozen=True)
class Resource:
    """A resource of the plan that is not a Kubernetes object: its type token, Pulumi name and inputs."""

    type: str
    name: str
    inputs: dict[str, Any]


@dataclass
class StackPlan:
    """The stack's objects and resources as planned; tests build one from dicts."""

    stack: str
    objects: list[dict[str, Any]] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    config: dict[str, str] = field(default_factory=dict)

    def of_kind(self, kind: str, group: str | None = None) -> list[dict[str, Any]]:
        """The objects of one kind (and API group, `ray.io`; "" for the core group)."""
        return [o for o in self.objects if o.get("kind") == kind and (group is None or api_group(o) == group)]

    def first(self, kind: str, group: str | None = None) -> dict[str, Any] | None:
        found = self.of_kind(kind, group)
        return found[0] if found else None

    def of_type(self, type_token: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_token]

    @property
    def project(self) -> str | None:
        return self.config.get("gcp:project")

    @property
    def location(self) -> str | None:
        """The cluster's location (a region or a zone), as the plan's Cluster resource names it."""
        for cluster in self.of_type(CLUSTER):
            location = cluster.inputs.get("location")
            if isinstance(location, str):
                return location
        return self.config.get("gcp:region") or self.config.get("gcp:zone")

    @property
    def region(self) -> str | None:
        """The region of the cluster's location (`us-central1` for `us-central1-b`)."""
        location = self.location
        if not location:
            return None
        parts = location.split("-")
        return "-".join(parts[:2]) if len(parts) > 2 else location

    def promql_queries(self) -> list[tuple[str, str]]:
        """(where, query) of every PromQL the plan's dashboards and alert policies send."""
        found: list[tuple[str, str]] = []
        for dashboard in self.of_type(DASHBOARD):
            raw = dashboard.inputs.get("dashboardJson")
            document = json.loads(raw) if isinstance(raw, str) else {}
            found += [(f"dashboard {dashboard.name}", query) for query in _promql(document)]
        for policy in self.of_type(ALERT_POLICY):
            for condition in policy.inputs.get("conditions") or []:
                query = (condition.get("conditionPrometheusQueryLanguage") or {}).get("query")
                if isinstance(query, str):
                    found.append((f"alert policy {policy.name}", query))
        return found

    def queried_metrics(self) -> dict[str, str]:
        """Each PromQL metric name the dashboards and alerts query, with the first place that queries it."""
        names: dict[str, str] = {}
        for where, query in self.promql_queries():
            for name in promql_metrics(query):
                names.setdefault(name, where)
        return names


def api_group(obj: dict[str, Any]) -> str:
    version = str(obj.get("apiVersion", ""))
    return version.split("/", 1)[0] if "/" in version else ""


def name_of(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def namespace_of(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _promql(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "prometheusQuery" and isinstance(value, str):
                yield value
            else:
                yield from _promql(value)
    elif isinstance(node, list):
        for item in node:
            yield from _promql(item)


def load_plan(project_dir: Path, stack: str) -> StackPlan:
    """Plan `stack` offline (up mode, declared secrets as placeholders: verify never needs their values).

    An unknown stack is the planner's own UserError (it lists the stacks there are); a program that fails is one
    line too, since verify cannot say what the stack assumes without its plan."""
    try:
        config = load_stack_config(project_dir, stack, placeholder_secrets=True)
    except UserError as error:
        raise _with_suggestion(error, project_dir, stack) from error
    capture = run_program(config.project_dir, config.stack, preview=False, config=config)
    if capture.error is not None:
        raise UserError("--stack", stack, f"does not plan: {capture.error.message}", "run `tpu-stacks plan` on it")
    objects = [manifest.object for manifest in render_manifests(capture)]
    resources = [
        Resource(r.type, r.name, dict(r.inputs))
        for r in capture.sorted_resources()
        if r.custom and not r.type.startswith(("kubernetes:", "pulumi:"))
    ]
    return StackPlan(stack, objects, resources, dict(config.values))


def _with_suggestion(error: UserError, project_dir: Path, stack: str) -> UserError:
    """The planner's unknown-stack error (it lists the stacks), led by the closest stack name when one is close."""
    if error.key != "--stack":
        return error
    known = [path.name[len("Pulumi.") : -len(".yaml")] for path in Path(project_dir).glob("Pulumi.*.yaml")]
    close = difflib.get_close_matches(stack, known, n=1)
    return UserError(
        error.key, error.value, error.problem, f"did you mean '{close[0]}'? {error.fix}" if close else error.fix
    )


def kinds(objects: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(apiVersion, kind) of the objects, each once, sorted."""
    return sorted({(str(o.get("apiVersion", "")), str(o.get("kind", ""))) for o in objects})

"""The most replicas a serving workload can run, read from the stack: what a traffic target is judged against.

- A Deployment or StatefulSet that an HPA scales (`scaleTargetRef` kind and name, same namespace): the
  HPA's `maxReplicas`; the controller never scales past it
  (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#how-does-a-horizontalpodautoscaler-work).
- Otherwise its own `spec.replicas`, 1 when absent (the API's default, apps/v1 DeploymentSpec).
- A RayService: the Ray Serve LLM application's `max_replicas` in each `deployment_config.autoscaling_config`
  (or a fixed integer `num_replicas`; `auto` is not a count), summed over its `llm_configs`, inside the
  `serveConfigV2` YAML text (Serve's config file, https://docs.ray.io/en/latest/serve/production-guide/config.html;
  `LLMConfig.deployment_config` holds the Serve deployment options, num_replicas and autoscaling_config,
  https://docs.ray.io/en/master/serve/llm/user-guides/configuration.html and
  https://docs.ray.io/en/latest/serve/configure-serve-deployment.html). Each Serve LLM replica is one engine on
  one slice.

A count not known at preview is None: the rule then says nothing rather than guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from tpu_policies.autoscaling import HPA_TYPES
from tpu_policies.stack import Item, Stack
from tpu_policies.values import UNKNOWN, as_int, as_list, as_str, dig
from tpu_policies.workloads import kind_of, name_of

SCALED_KINDS = ("Deployment", "StatefulSet", "ReplicaSet")


@dataclass(frozen=True)
class Most:
    """The most replicas, and the field that says so (for the message)."""

    count: int
    field: str


def _namespace(props: dict[str, Any]) -> str:
    return as_str(dig(props, "metadata", "namespace")) or "default"


def _hpa(stack: Stack, item: Item, kind: str) -> Item | None:
    name = as_str(dig(item.props, "metadata", "name"))
    for other in stack.items:
        if other.type not in HPA_TYPES:
            continue
        ref = dig(other.props, "spec", "scaleTargetRef")
        if (
            as_str(dig(ref, "kind")) == kind
            and name is not None
            and as_str(dig(ref, "name")) == name
            and _namespace(other.props) == _namespace(item.props)
        ):
            return other
    return None


def _serve_max(text: str) -> int | None:
    """The total of every Serve LLM config's most replicas; None when one is not stated or not readable."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    total, found = 0, False
    for app in as_list(dig(config, "applications")):
        for llm in as_list(dig(app, "args", "llm_configs")):
            deployment = dig(llm, "deployment_config")
            count = as_int(dig(deployment, "autoscaling_config", "max_replicas"))
            count = count if count is not None else as_int(dig(deployment, "num_replicas"))
            if count is None:
                return None
            total, found = total + count, True
    return total if found else None


def most_replicas(stack: Stack, item: Item) -> Most | None:
    """The most replicas `item` can run, or None when the stack does not say at preview."""
    kind = kind_of(item.type, item.props)
    if kind == "RayService":
        text = dig(item.props, "spec", "serveConfigV2")
        count = _serve_max(text) if isinstance(text, str) else None
        return Most(count, "serveConfigV2 max_replicas") if count is not None else None
    if kind not in SCALED_KINDS:
        return None
    hpa = _hpa(stack, item, kind)
    if hpa is not None:
        count = as_int(dig(hpa.props, "spec", "maxReplicas"))
        field = f"HorizontalPodAutoscaler {name_of(hpa.props, hpa.name)} maxReplicas"
        return Most(count, field) if count is not None else None
    value = dig(item.props, "spec", "replicas")
    if value is UNKNOWN:
        return None
    count = 1 if value is None else as_int(value)
    return Most(count, "spec.replicas") if count is not None else None

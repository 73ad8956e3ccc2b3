"""Every shipped stack's NetworkPolicies against the connectivity contract they carry, and against the
flows its rendered objects imply (Services and their callers, APIServices, PodMonitorings, Ray ports),
with network-config-analyzer as the independent model (tests/network/contract.py and
tests/network/expectations.py say what is checked).

Needs the `tpu-stacks.dev/flows` annotation on every generated NetworkPolicy (issue 24, Build item 1):
a policy or pod without one is a failure here, never a skip. Needs PyPI once, to make nca's venv.
"""

import dataclasses
import json
from pathlib import Path

import pytest

from tests.network.contract import check
from tests.stacks.test_security import objects
from tests.stacks.test_shipped_stacks import STACKS
from tpu_stacks_preview.config import load_stack_config
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.manifests import render_manifests

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.network
@pytest.mark.flows_contract
@pytest.mark.parametrize("stack", STACKS)
def test_every_contract_flow_and_expectation_is_allowed_and_no_ingress_is_wider(stack, nca):
    failures = check(objects(stack), nca=nca)
    assert not failures, "\n" + "\n".join(f"{stack}: {line}" for line in failures)


def with_cluster(stack: str, **cluster: object) -> list[dict]:
    """The rendered objects of a shipped stack whose `tpu-stacks:cluster` section has `cluster` added."""
    config = load_stack_config(ROOT, stack, placeholder_secrets=True)
    values = dict(config.values)
    values["tpu-stacks:cluster"] = json.dumps({**json.loads(values["tpu-stacks:cluster"]), **cluster})
    up = run_program(ROOT, stack, preview=False, config=dataclasses.replace(config, values=values))
    assert up.error is None, up.error
    return [m.object for m in render_manifests(up)]


@pytest.mark.network
@pytest.mark.flows_contract
@pytest.mark.parametrize("stack", ["raytrain", "vllm-405b"])
def test_a_self_installed_kuberay_reaches_the_head_from_its_namespace_and_an_impostor_does_not(stack, nca):
    """The operator of ray-system (tests/network/cluster.py) is what the contract names: its flows must pass; the
    impostor of the tenant namespace, with the same labels, must not (the ray-operator expectation)."""
    rendered = with_cluster(stack, kuberay={"namespace": "ray-system"})
    failures = check(rendered, nca=nca)
    assert not failures, "\n" + "\n".join(f"{stack}: {line}" for line in failures)
    flows = [
        json.loads(o["metadata"]["annotations"]["tpu-stacks.dev/flows"])
        for o in rendered
        if o["kind"] == "NetworkPolicy" and o["metadata"].get("annotations")
    ]
    operator = [f for group in flows for f in group if f["peer"].get("namespace") == "ray-system"]
    assert operator and all(
        f["peer"]["labels"] == {"app.kubernetes.io/component": "kuberay-operator"} for f in operator
    )

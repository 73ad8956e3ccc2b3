"""vllm/gateway_plan.py's decisions on the plan alone (no Pulumi program): the Cloud Armor rules' priorities and
chunks at their boundaries, the armor policy's name, where the smoke test goes, and the picker's config text."""

import json

import pytest

from tests.clients import CLIENTS
from tpu_stacks.catalog.inference_gateway import ARMOR_RANGES_PER_RULE, OBJECTIVE_HEADER
from tpu_stacks.catalog.pickers import ROUTER_PICKER
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

ON = {"enabled": True}


def gateway(cluster: dict | None = None, **spec):
    cluster = cluster or {"project": "proj", "location": "us-central1-b"}
    fields = {"model": "meta-llama/Llama-3.1-70B", "gateway": ON, **spec}
    return plan_vllm(VllmSpec(**fields), ClusterSpec(**cluster), True, True).gateway


def public(ranges: list[str], **spec):
    return gateway(exposure="public", source_ranges=ranges, **spec)


def ranges(count: int) -> list[str]:
    return [f"203.0.{i}.0/24" for i in range(count)]


@pytest.mark.parametrize(
    ("count", "sizes"),
    [(1, [1]), (ARMOR_RANGES_PER_RULE, [10]), (ARMOR_RANGES_PER_RULE + 1, [10, 1]), (23, [10, 10, 3])],
)
def test_the_allow_rules_take_ten_ranges_each_from_priority_1000_up(count, sizes):
    assert ARMOR_RANGES_PER_RULE == 10  # Cloud Armor's srcIpRanges limit per rule (catalog/inference_gateway.py)
    *allow, deny = public(ranges(count)).armor_rules()
    assert [len(rule.ranges) for rule in allow] == sizes
    assert [rule.priority for rule in allow] == [1000 + i for i in range(len(sizes))]
    assert deny.ranges == ("*",) and deny.action.startswith("deny")


def test_the_armor_policy_is_named_after_the_cluster_and_namespace_within_63_characters():
    assert public(list(CLIENTS)).armor_policy == "tpu-cluster-vllm-gateway-armor"  # the default namespace: vllm
    assert public(list(CLIENTS), namespace="serving").armor_policy == "tpu-cluster-serving-gateway-armor"
    adopted = {
        "project": "proj",
        "location": "us-central1-b",
        "existing": {"name": "shared", "location": "us-central1-b"},
    }
    assert gateway(adopted, exposure="public", source_ranges=list(CLIENTS)).armor_policy == (
        "shared-vllm-gateway-armor"
    )
    long = public(list(CLIENTS), namespace="n" * 60).armor_policy
    assert len(long) == 63 and long.endswith("-gateway-armor") and long.startswith("tpu-cluster-nnn")


def test_the_smoke_test_goes_through_an_internal_gateway_only():
    internal, external = gateway(api_key=True), public(list(CLIENTS))
    assert (internal.public, internal.smoke_through) == (False, True)
    assert (external.public, external.smoke_through) == (True, False)
    assert internal.source_ranges == () and external.source_ranges == tuple(CLIENTS)


def test_the_config_map_text_is_the_pickers_config_as_json_and_objectives_turn_flow_control_on():
    plain = gateway(api_key=True)
    assert json.loads(plain.picker_config_text()) == plain.picker_config() and not plain.flow_control
    assert plain.objective_header == ROUTER_PICKER.objective_header == "x-llm-d-inference-objective"  # the default
    legacy = gateway(api_key=True, gateway={**ON, "picker": "epp-v1.5.0"})
    assert legacy.objective_header == OBJECTIVE_HEADER  # the v1.5.0 picker's own header
    ordered = gateway(api_key=True, gateway={**ON, "objectives": [{"name": "chat", "priority": 1}]})
    assert ordered.flow_control and [o.name for o in ordered.objectives] == ["chat"]

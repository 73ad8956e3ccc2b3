"""`vllm.gateway.picker`, `vllm.gateway.workload` and `vllm.disaggregation` (docs/gateway.md): llm-d's router by
default, the v1.5.0 picker selectable with an advisory, scorer weights by workload, and the refusal of
prefill/decode disaggregation the pinned releases cannot run."""

import json

import pytest
import yaml
from pydantic import ValidationError

from tests.test_smoke import env_of, smoke_jobs
from tests.vllm.test_gateway import ON, _one, _stack_with, plan, refusal
from tpu_stacks.catalog.engines.epp import EPP
from tpu_stacks.catalog.engines.router import ROUTER
from tpu_stacks.catalog.pickers import (
    LEGACY_PICKER_RELEASE,
    PICKER_ADVISORY,
    PICKERS,
    ROUTER_PICKER,
    SAME_PORTS,
    WORKLOAD_WEIGHTS,
)
from tpu_stacks.catalog.upstream import number
from tpu_stacks.k8s.crd_files import crd_document
from tpu_stacks.vllm.gateway_plan import CONFIG_FILE, PICKER_NAME


def _weights(config: dict) -> dict[str, float]:
    (profile,) = config["schedulingProfiles"]
    return {p["pluginRef"]: p["weight"] for p in profile["plugins"]}


# -- the catalogue ------------------------------------------------------------------------------------------------


def test_both_releases_keep_the_ports_the_gateway_resources_name():
    assert all(number(router) == number(legacy) for router, legacy in SAME_PORTS)
    assert ROUTER.scrape_port() == EPP.scrape_port() == 9090


def test_each_release_has_its_own_objective_crd_in_the_group_it_reads():
    for picker in PICKERS.values():
        document = crd_document(picker.objective_crd)
        group, version = picker.objective_api_version.split("/")
        assert document["spec"]["group"] == group and document["spec"]["names"]["kind"] == "InferenceObjective"
        assert version in [v["name"] for v in document["spec"]["versions"] if v["served"]]
        assert (group, ("inferenceobjectives", "inferencemodelrewrites")) in picker.rules
    assert ROUTER_PICKER.objective_api_version == "llm-d.ai/v1alpha2"
    assert ROUTER_PICKER.objective_header == "x-llm-d-inference-objective"
    assert LEGACY_PICKER_RELEASE.objective_header == "x-gateway-inference-objective"


def test_the_router_may_read_objectives_in_whichever_group_discovery_finds():
    """The router watches the legacy group when llm-d.ai's CRD is absent (controller_config.go @ v0.10.0), so it
    is granted both, as its chart does; a Role without the legacy group would leave its informer unsynced."""
    legacy = next(p for p in PICKERS.values() if p is LEGACY_PICKER_RELEASE).objective_api_version.split("/")[0]
    objectives = ("inferenceobjectives", "inferencemodelrewrites")
    assert {(legacy, objectives), ("llm-d.ai", objectives)} <= set(ROUTER_PICKER.rules)


def test_every_metric_the_dashboard_and_smoke_test_read_is_exported_by_that_release():
    for picker in PICKERS.values():
        dumped = picker.metrics.model_dump()
        kv_index = dumped.pop("kv_index") or {}
        names = [v for v in (*dumped.values(), *kv_index.values()) if v and v != picker.metrics.endpoint_label]
        assert all(picker.record.metric(name) is not None for name in names), picker.name


# -- the plan -----------------------------------------------------------------------------------------------------


def test_the_router_is_the_default_and_the_legacy_picker_is_selectable():
    assert plan(gateway=ON).gateway.picker is ROUTER_PICKER
    legacy = plan(gateway={**ON, "picker": "epp-v1.5.0"}).gateway
    assert legacy.picker is LEGACY_PICKER_RELEASE
    assert legacy.picker_config()["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1"
    assert legacy.objective_header == "x-gateway-inference-objective"
    # both releases name their flags alike (each read from its own options.go)
    assert legacy.picker_args() == plan(gateway=ON).gateway.picker_args()
    with pytest.raises(ValidationError) as caught:  # the config layer renders it in one line naming the key
        plan(gateway={**ON, "picker": "epp-v1.6.0"})
    assert "gateway.picker" in str(caught.value)


@pytest.mark.parametrize("workload", sorted(WORKLOAD_WEIGHTS))
def test_the_workload_sets_the_scorer_weights_from_its_llm_d_source(workload):
    chosen = WORKLOAD_WEIGHTS[workload]
    decided = plan(gateway={**ON, "workload": workload}).gateway
    config = decided.picker_config()
    assert _weights(config) == {
        "queue-scorer": chosen.queue,
        "kv-cache-utilization-scorer": chosen.kv_cache,
        "prefix-cache-scorer": chosen.prefix_cache,
    }
    assert ("featureGates" in config) == chosen.flow_control
    assert "llm-d" in chosen.source


def test_rag_weighs_the_prefix_cache_above_the_load_scorers_and_chat_is_the_default():
    rag = _weights(plan(gateway={**ON, "workload": "rag"}).gateway.picker_config())
    assert rag["prefix-cache-scorer"] > rag["queue-scorer"] + rag["kv-cache-utilization-scorer"] - 1
    assert _weights(plan(gateway=ON).gateway.picker_config()) == {
        "queue-scorer": 2,
        "kv-cache-utilization-scorer": 2,
        "prefix-cache-scorer": 3,
    }
    with pytest.raises(ValidationError) as caught:
        plan(gateway={**ON, "workload": "agentic"})
    assert "gateway.workload" in str(caught.value)


def test_picker_or_workload_on_a_gateway_that_is_off_is_refused():
    error = refusal(gateway={"picker": "epp-v1.5.0"}, source_ranges=["10.0.0.0/8"])
    assert error.key == "vllm.gateway.enabled" and "vllm.gateway.picker" in str(error)
    error = refusal(gateway={"workload": "rag"}, source_ranges=["10.0.0.0/8"])
    assert "vllm.gateway.workload" in str(error)


def test_disaggregation_is_refused_naming_the_missing_support():
    split = {"prefill": {"topology": "2x4", "replicas": 1}, "decode": {"topology": "2x4", "replicas": 2}}
    error = refusal(gateway=ON, disaggregation=split)
    text = str(error)
    assert error.key == "vllm.disaggregation" and "\n" not in text
    assert "TPUConnector" in text and "nixlv2" in text  # both ends' connectors, neither shared
    error = refusal(disaggregation=split)  # refused without a gateway too
    assert error.key == "vllm.disaggregation"


# -- the resources ------------------------------------------------------------------------------------------------


def test_the_legacy_picker_runs_its_own_image_and_objectives_with_an_advisory(tmp_path):
    capture_ = _stack_with(tmp_path, {"picker": "epp-v1.5.0", "objectives": [{"name": "chat", "priority": 5}]})
    pod = _one(capture_, "Deployment", PICKER_NAME)["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == "registry.k8s.io/gateway-api-inference-extension/epp:v1.5.0"
    (objective,) = capture_.of_type("kubernetes:inference.networking.x-k8s.io/v1alpha2:InferenceObjective")
    assert objective.inputs["spec"]["priority"] == 5
    assert capture_.of_type("kubernetes:llm-d.ai/v1alpha2:InferenceObjective") == []
    config = yaml.safe_load(_one(capture_, "ConfigMap", PICKER_NAME)["data"][CONFIG_FILE])
    assert config["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1"
    warnings = [log.message for log in capture_.logs if log.severity == "warning"]
    assert warnings.count(PICKER_ADVISORY) == 1 and "\n" not in PICKER_ADVISORY
    # the smoke test counts this release's picks
    (job,) = smoke_jobs({r.name: r for r in capture_.resources})
    counter = json.loads(env_of(job.inputs)["SMOKE_PICKER_COUNTER"])
    assert counter == {"name": "inference_extension_scheduler_attempts_total", "labels": {"status": "success"}}


def test_the_router_prints_no_advisory(tmp_path):
    capture_ = _stack_with(tmp_path)
    assert PICKER_ADVISORY not in [log.message for log in capture_.logs]

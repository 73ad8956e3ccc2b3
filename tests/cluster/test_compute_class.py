"""The ComputeClass of a fallback slice is derived from the sizing, never typed: change the model and the
class changes. Declared by TpuCluster instead of a node pool, selected by the workload's pods, and
validated strictly against the schema written from GKE's CRD reference."""

import copy
from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.clients import CLIENTS
from tests.shipped import shipped
from tpu_stacks.cluster.compute_class import compute_class_spec
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import SaxmlSpec
from tpu_stacks.vllm.plan import plan_vllm
from tpu_stacks.vllm.spec import VllmSpec
from tpu_stacks_preview.manifests import render_manifests
from tpu_stacks_preview.schema import validate_objects

ROOT = Path(__file__).resolve().parents[2]
FALLBACK = ["spot", "onDemand", "flexStart"]
CLUSTER = {"project": "p", "location": "us-east5-b", "minVersion": "1.33.3-gke.1136000"}


def vllm_class(model: str) -> dict:
    spec = VllmSpec.model_validate(
        {"model": model, "tpuGeneration": "v6e", "capacity": FALLBACK, "sourceRanges": CLIENTS}
    )
    plan = plan_vllm(spec, ClusterSpec.model_validate(CLUSTER), hf_token_given=True, api_key_given=False)
    return compute_class_spec(plan.pool, autopilot=False)


def test_llama_70b_class_is_the_tutorials_v6e_2x4_on_each_kind():
    """Llama 3.1 70B on v6e: 2x4 on one ct6e-standard-8t (the vLLM tutorial's slice), 8 chips per node."""
    spec = vllm_class("meta-llama/Llama-3.1-70B")
    expected_tpu = {"type": "tpu-v6e-slice", "count": 8, "topology": "2x4"}
    assert [rule["tpu"] for rule in spec["priorities"]] == [expected_tpu] * 3
    assert [rule["machineType"] for rule in spec["priorities"]] == ["ct6e-standard-8t"] * 3
    assert [rule.get("spot") for rule in spec["priorities"]] == [True, False, None]
    assert spec["priorities"][2]["flexStart"] == {"enabled": True}
    assert all(rule["location"] == {"zones": ["us-east5-b"]} for rule in spec["priorities"])
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert spec["nodePoolAutoCreation"] == {"enabled": True}
    assert spec["activeMigration"] == {"optimizeRulePriority": True}
    assert spec["nodePoolConfig"] == {"nodeLabels": {"tpu-stacks/slice": "vllm-pool"}}


def test_a_smaller_model_changes_the_class():
    """Qwen2.5 1.5B (about 3 GB of bf16 weights) fits one 32 GB v6e chip: a 1x1 on ct6e-standard-1t."""
    spec = vllm_class("Qwen/Qwen2.5-1.5B-Instruct")
    assert {rule["machineType"] for rule in spec["priorities"]} == {"ct6e-standard-1t"}
    assert {(r["tpu"]["type"], r["tpu"]["count"], r["tpu"]["topology"]) for r in spec["priorities"]} == {
        ("tpu-v6e-slice", 1, "1x1")
    }


def test_a_reservation_first_is_a_specific_reservation_rule():
    spec = VllmSpec.model_validate(
        {
            "model": "meta-llama/Llama-3.1-70B",
            "capacity": [{"reservation": "v6e-res"}, "onDemand"],
            "sourceRanges": CLIENTS,
        }
    )
    plan = plan_vllm(spec, ClusterSpec.model_validate(CLUSTER), hf_token_given=True, api_key_given=False)
    first = compute_class_spec(plan.pool, autopilot=False)["priorities"][0]
    assert first["reservations"] == {"affinity": "Specific", "specific": [{"name": "v6e-res"}]}
    assert "spot" not in first


def test_autopilot_class_leaves_pool_creation_to_autopilot():
    cluster = {**CLUSTER, "location": "us-east5", "mode": "autopilot", "minVersion": "1.33.0-gke.1712000"}
    spec = VllmSpec.model_validate(
        {"model": "meta-llama/Llama-3.1-70B", "capacity": ["spot", "onDemand"], "sourceRanges": CLIENTS}
    )
    plan = plan_vllm(spec, ClusterSpec.model_validate(cluster), hf_token_given=True, api_key_given=False)
    assert "nodePoolAutoCreation" not in compute_class_spec(plan.pool, autopilot=True)


def test_multi_host_saxml_class_counts_chips_per_node():
    """The Saxml tutorial's 4x8 on ct5lp-hightpu-4t: 8 hosts of 4 chips, so tpu.count 4 (google.com/tpu per
    pod), and the multi-host pools' 15 pods per node."""
    config = yaml.safe_load((ROOT / "Pulumi.saxml.yaml").read_text())["config"]
    section = {**config["tpu-stacks:saxml"], "capacity": ["spot", "onDemand"]}
    cluster = {**config["tpu-stacks:cluster"], "project": "p", "minVersion": "1.33.3-gke.1136000"}
    plan = plan_saxml(SaxmlSpec.model_validate(section), ClusterSpec.model_validate(cluster))
    (pool,) = plan.cluster.compute_classes
    rules = compute_class_spec(pool, autopilot=False)["priorities"]
    assert [(r["tpu"], r["machineType"], r["maxPodsPerNode"]) for r in rules] == [
        ({"type": "tpu-v5-lite-podslice", "count": 4, "topology": "4x8"}, "ct5lp-hightpu-4t", 15)
    ] * 2


def test_a_vllm_capacity_mistake_names_the_vllm_key():
    spec = VllmSpec.model_validate(
        {"model": "meta-llama/Llama-3.1-70B", "capacity": ["spot", "sport"], "sourceRanges": CLIENTS}
    )
    with pytest.raises(Exception) as caught:
        plan_vllm(spec, ClusterSpec.model_validate(CLUSTER), hf_token_given=True, api_key_given=False)
    assert str(caught.value).startswith("vllm.capacity[1]: 'sport' is not a capacity kind; did you mean 'spot'?")


# -- the shipped stack, as `tpu-stacks plan` runs it --------------------------------------------------


@cache
def fallback_up():
    capture = shipped("vllm-fallback")
    assert capture.error is None, capture.error
    return capture


def test_the_fallback_stack_declares_a_class_and_no_tpu_pool():
    capture = fallback_up()
    pools = [r.inputs["name"] for r in capture.of_type("gcp:container/nodePool:NodePool")]
    assert pools == ["system"]
    (klass,) = capture.of_type("kubernetes:cloud.google.com/v1:ComputeClass")
    assert klass.inputs["metadata"]["name"] == "vllm-pool"
    assert klass.inputs["spec"]["nodePoolConfig"]["serviceAccount"] == (
        "vllm-fallback-nodes@my-tpu-project.iam.gserviceaccount.com"
    )
    (cluster,) = capture.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["clusterAutoscaling"] == {"autoscalingProfile": "BALANCED"}
    (deployment,) = [d for d in capture.of_type("kubernetes:apps/v1:Deployment") if d.name == "vllm-deployment"]
    selector = deployment.inputs["spec"]["template"]["spec"]["nodeSelector"]
    assert selector["cloud.google.com/compute-class"] == "vllm-pool"
    assert "cloud.google.com/gke-spot" not in selector  # a capacity label would pin one kind
    assert klass.urn in deployment.dependencies  # the server waits for its class as it would for a pool


def compute_class_object() -> dict:
    (manifest,) = [m for m in render_manifests(fallback_up()) if m.kind == "ComputeClass"]
    return manifest.object


def test_the_class_validates_against_the_written_schema():
    assert validate_objects([compute_class_object()], project_dir=ROOT).problems == []


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda o: o["spec"].__setitem__("whenUnsatisfable", "DoNotScaleUp"), "spec"),
        (lambda o: o["spec"].__setitem__("whenUnsatisfiable", "ScaleUp"), "spec/whenUnsatisfiable"),
        (lambda o: o["spec"]["priorities"][0]["tpu"].pop("count"), "spec/priorities/0/tpu"),
        (lambda o: o["spec"]["priorities"][0]["tpu"].__setitem__("count", "8"), "spec/priorities/0/tpu/count"),
        (
            lambda o: o["spec"]["priorities"][2].__setitem__("flexStart", {"enable": True}),
            "spec/priorities/2/flexStart",
        ),
        (
            lambda o: o["spec"]["priorities"][0].__setitem__("reservations", {"affinity": "Any"}),
            "spec/priorities/0/reservations/affinity",
        ),
    ],
    ids=["misspelled-field", "bad-enum", "tpu-without-count", "count-as-string", "flexstart-typo", "affinity-enum"],
)
def test_a_wrong_class_is_a_schema_error(change, path):
    bad = copy.deepcopy(compute_class_object())
    change(bad)
    problems = validate_objects([bad], project_dir=ROOT).problems
    assert problems and {p.path for p in problems} == {path}, problems

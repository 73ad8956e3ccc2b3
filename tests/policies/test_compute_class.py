"""tpu-compute-class-matches-workload: TPU pods against the ComputeClass they select (violating and passing),
from our components and from raw objects any program could declare."""

from tests.policies import objects as o
from tests.policies.harness import UNKNOWN_STRING, capture, of, raw, run
from tpu_stacks.cluster.component import TpuCluster

POLICY = "tpu-compute-class-matches-workload"
MATCHING = "tpu-workload-matches-pool"
V5E, V6E = "tpu-v5-lite-podslice", "tpu-v6e-slice"
CLASS_LABEL = "cloud.google.com/compute-class"
CLASS_TYPE = "kubernetes:cloud.google.com/v1:ComputeClass"


def fallback_cluster():
    return TpuCluster(
        "c",
        {
            "project": "p",
            "location": "us-east5-b",
            "min_version": "1.33.3-gke.1136000",
            "slices": [{"generation": "v6e", "topology": "2x4", "name": "serve", "capacity": ["spot", "onDemand"]}],
        },
    )


def selecting(klass: str, accelerator=V6E, topology="2x4", chips=8):
    spec = o.pod(accelerator, topology, chips)
    spec["nodeSelector"] = {**(spec["nodeSelector"] or {}), CLASS_LABEL: klass}
    return spec


def raw_class(name: str, *tpus: dict | None, spot: tuple[bool, ...] = ()) -> object:
    """A class with one priority per `tpus` entry; spot by default, or as `spot` says per priority."""
    kinds = spot or (True,) * len(tpus)
    priorities = [{"spot": s, **({"tpu": tpu} if tpu else {"machineFamily": "n4"})} for tpu, s in zip(tpus, kinds)]
    return raw(
        CLASS_TYPE,
        name,
        {
            "apiVersion": "cloud.google.com/v1",
            "kind": "ComputeClass",
            "metadata": {"name": name},
            "spec": {"priorities": priorities},
        },
    )


def raw_deployment(spec: dict) -> object:
    return raw(
        "kubernetes:apps/v1:Deployment",
        "d",
        {"metadata": {"name": "d"}, "spec": {"replicas": 1, "template": {"spec": spec}}},
    )


TPU_2X4 = {"type": V6E, "count": 8, "topology": "2x4"}


def test_our_class_and_the_pods_selecting_it_pass_both_rules():
    diagnostics = run(capture(lambda: [fallback_cluster(), o.deployment("vllm", selecting("serve"))][0]))
    assert of(diagnostics, POLICY) == [] and of(diagnostics, MATCHING) == []


def test_selecting_a_class_nobody_declares_is_refused():
    (problem,) = of(run(capture(lambda: [fallback_cluster(), o.deployment("vllm", selecting("serv"))][0])), POLICY)
    assert problem.level == "mandatory" and problem.urn.endswith("Deployment::vllm")
    assert "selects ComputeClass serv, which this program does not declare (declared: serve)" in problem.message


def test_gke_built_in_classes_need_no_declaration():
    assert of(run([raw_deployment(selecting("Accelerator"))]), POLICY) == []


def test_raw_class_of_the_right_shape_passes():
    assert of(run([raw_class("tpu", TPU_2X4, TPU_2X4), raw_deployment(selecting("tpu"))]), POLICY) == []


def test_raw_class_whose_type_disagrees_is_refused():
    wrong = {"type": V5E, "count": 8, "topology": "2x4"}
    (problem,) = of(run([raw_class("tpu", TPU_2X4, wrong), raw_deployment(selecting("tpu"))]), POLICY)
    assert "ComputeClass tpu priorities[1] (tpu-v5-lite-podslice 2x4, 8 chips per node)" in problem.message
    assert f"creates {V5E} nodes but the pods select {V6E}" in problem.message


def test_raw_class_whose_topology_disagrees_is_refused():
    (problem,) = of(run([raw_class("tpu", {**TPU_2X4, "topology": "2x2"}), raw_deployment(selecting("tpu"))]), POLICY)
    assert "creates 2x2 slices but the pods select 2x4" in problem.message


def test_raw_class_whose_chips_per_node_disagree_is_refused():
    """A ct6e-standard-4t pair (4 chips per node) for pods that request 8: they never fit a node."""
    (problem,) = of(run([raw_class("tpu", {**TPU_2X4, "count": 4}), raw_deployment(selecting("tpu"))]), POLICY)
    assert "gives 4 chips per node but the pods request 8 google.com/tpu" in problem.message


def test_a_priority_without_tpu_is_refused_for_tpu_pods():
    (problem,) = of(run([raw_class("tpu", TPU_2X4, None), raw_deployment(selecting("tpu"))]), POLICY)
    assert "priorities[1] (no tpu) has no tpu block" in problem.message


def test_pods_selecting_only_the_class_are_checked_on_chips():
    spec = o.pod(None, None, 4)
    spec["nodeSelector"] = {CLASS_LABEL: "tpu"}
    (problem,) = of(run([raw_class("tpu", TPU_2X4), raw_deployment(spec)]), POLICY)
    assert "gives 8 chips per node but the pods request 4" in problem.message


def test_an_unknown_selection_is_not_judged():
    assert of(run([raw_class("tpu", TPU_2X4), raw_deployment(selecting(UNKNOWN_STRING))]), POLICY) == []


def test_a_class_counts_as_a_pool_for_the_matching_rule():
    """Without the class, a Standard cluster with no v6e pool leaves the pods with no provider (rule 3)."""
    cluster = lambda: TpuCluster("c", {"project": "p", "location": "us-east5-b"})  # noqa: E731
    without = of(run(capture(lambda: [cluster(), o.deployment("vllm", selecting("tpu"))][0])), MATCHING)
    assert len(without) == 1 and "no TPU node pool of this stack provides it" in without[0].message
    resources = capture(lambda: [cluster(), o.deployment("vllm", selecting("tpu"))][0]) + [raw_class("tpu", TPU_2X4)]
    assert of(run(resources), MATCHING) == []


def test_selecting_one_kinds_label_with_a_fallback_class_is_refused():
    """Spot-only pods in a spot -> on-demand class: the on-demand nodes never take them."""
    spec = selecting("tpu")
    spec["nodeSelector"]["cloud.google.com/gke-spot"] = "true"
    fallback = raw_class("tpu", TPU_2X4, TPU_2X4, spot=(True, False))
    (problem,) = of(run([fallback, raw_deployment(spec)]), POLICY)
    assert "selects ComputeClass tpu and cloud.google.com/gke-spot" in problem.message
    single = of(run([raw_class("tpu", TPU_2X4), raw_deployment(spec)]), POLICY)
    assert single == []  # one priority: the label pins nothing away
    all_spot = of(run([raw_class("tpu", TPU_2X4, TPU_2X4), raw_deployment(spec)]), POLICY)
    assert all_spot == []  # every priority's nodes carry the spot label

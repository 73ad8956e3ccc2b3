"""tpu-workload-matches-pool (`policies/tpu_policies/matching.py`) pinned rule by rule on plain objects.

`test_matching.py` runs the policy through the engine on the tutorials' workloads; these call
`check_template` directly, so each rule mutation testing found unpinned has its own test: pipeline
parallelism (`--pipeline-parallel-size`, TP = devices / pp), a mesh with two `-1` axes or a zero
axis, `dcn_*` axes left out of the ICI product, tpu7x's two JAX devices per chip in the TP check.
Numbers: [D-GKE-TPU], [D-7x] (machine types of 1, 4 and 8 chips; a tpu7x chip is 2 JAX
devices), [D-GKE-TPU] (a TPU pod takes all chips of its node; one pod per host of a slice).
"""

import pytest

from tpu_policies import matching
from tpu_policies.slices import pool_slice
from tpu_policies.values import UNKNOWN
from tpu_policies.workloads import PodTemplate
from tpu_stacks.catalog.tpu import GENERATIONS
from tpu_stacks.objects.annotations import PARALLELISM, TENSOR_PARALLEL

V5E, V6E, TPU7X = "tpu-v5-lite-podslice", "tpu-v6e-slice", "tpu7x"


def pod(accelerator, topology, chips, args=(), command=()):
    selector = {k: v for k, v in (("cloud.google.com/gke-tpu-accelerator", accelerator),
                                  ("cloud.google.com/gke-tpu-topology", topology)) if v is not None}  # fmt: skip
    container = {"name": "c", "image": "i", "resources": {"limits": {"google.com/tpu": chips}}}
    if args:
        container["args"] = list(args)
    if command:
        container["command"] = list(command)
    return {"nodeSelector": selector, "containers": [container]}


def template(spec, pods=1, field=None):
    return PodTemplate("spec.template", spec, {}, pods, field)


def pool(machine_type, topology=None, name="tpu"):
    props = {"name": name, "nodeConfig": {"machineType": machine_type}}
    if topology:
        props["placementPolicy"] = {"type": "COMPACT", "tpuTopology": topology}
    return pool_slice(props, name)


def check(spec, notes=None, pools=(), need_pool=False, pods=1, field=None):
    return matching.check_template(template(spec, pods, field), notes or {}, list(pools), need_pool)


# -- selectors and pools ---------------------------------------------------------------------------


def test_values_unknown_at_preview_are_not_judged():
    assert check(pod(UNKNOWN, "2x4", 8)) == []
    assert check(pod(V6E, UNKNOWN, 8)) == []
    assert check(pod(V6E, "2x4", UNKNOWN)) == []


@pytest.mark.parametrize(
    "accelerator,topology,missing",
    [(None, "2x4", "cloud.google.com/gke-tpu-accelerator"), (V6E, None, "cloud.google.com/gke-tpu-topology")],
)
def test_a_tpu_pod_must_select_generation_and_topology(accelerator, topology, missing):
    (problem,) = check(pod(accelerator, topology, 8))
    assert problem.startswith(f"spec.template requests 8 google.com/tpu but selects no {missing}; add them")


def test_an_accelerator_no_gke_tpu_has():
    (problem,) = check(pod("tpu-v9", "2x4", 8))
    assert problem == (
        "spec.template selects cloud.google.com/gke-tpu-accelerator=tpu-v9, which no GKE TPU has; use one of "
        + ", ".join(g.accelerator_label for g in GENERATIONS)  # the catalogue's labels, not a list typed here
    )
    assert "tpu-v4-podslice, tpu-v5-lite-podslice, tpu-v5p-slice, tpu-v6e-slice" in problem


def test_a_topology_the_generation_lacks():
    (problem,) = check(pod(V6E, "3x3", 8))
    assert problem.startswith("spec.template: cloud.google.com/gke-tpu-topology: '3x3' is not a v6e topology")


def test_no_pool_provides_the_slice():
    (problem,) = check(pod(V6E, "2x4", 8), pools=[pool("ct6e-standard-4t", "4x4", "big")], need_pool=True)
    assert problem == (
        "spec.template selects tpu-v6e-slice 2x4 but no TPU node pool of this stack provides it "
        "(TPU pools: big (ct6e-standard-4t, tpu-v6e-slice 4x4)); add a v6e 2x4 node pool or change the node selectors"
    )
    (problem,) = check(pod(V6E, "2x4", 8), pools=[], need_pool=True)
    assert "(TPU pools: none)" in problem
    assert check(pod(V6E, "2x4", 8), pools=[], need_pool=False) == []  # Autopilot: the catalogue decides


# -- chips per pod, pods per slice ------------------------------------------------------------------


def test_chips_per_pod_must_be_a_nodes_chips():
    (problem,) = check(pod(V6E, "2x4", 2))
    assert problem == (
        "spec.template requests 2 google.com/tpu per pod but tpu-v6e-slice 2x4 nodes have "
        "4 chips (ct6e-standard-4t) or 8 chips (ct6e-standard-8t); a TPU pod takes all chips of its node: "
        "request 8 per pod and run 1 pod(s) per slice"
    )


def test_chips_per_pod_against_the_pool():
    (problem,) = check(pod(V5E, "4x8", 8), pools=[pool("ct5lp-hightpu-4t", "4x8", "p")], need_pool=True)
    assert "nodes have 4 chips (pool p); a TPU pod takes all chips of its node: request 4 per pod and run 8" in problem


def test_pods_per_slice_must_be_the_hosts():
    (problem,) = check(pod(V5E, "4x8", 4), pods=4, field="parallelism")
    assert problem == (
        "spec.template runs 4 pod(s) per slice but tpu-v5-lite-podslice 4x8 with 4 chips per node is 8 hosts; "
        "set parallelism to 8"
    )
    (problem,) = check(pod(V5E, "4x8", 4), pods=1)
    assert problem.endswith("use a JobSet or LeaderWorkerSet with 8 pods per slice, or a single-host shape")
    assert check(pod(V5E, "4x8", 4), pods=8, field="parallelism") == []
    assert check(pod(V5E, "4x8", 4), pods=None) == []  # the kind does not say how many pods


# -- tensor parallelism ----------------------------------------------------------------------------


def test_tensor_parallel_size_must_equal_the_devices():
    (problem,) = check(pod(V6E, "2x4", 8, args=["--tensor-parallel-size=4"]))
    assert problem == (
        "tensor-parallel size 4 (container arg --tensor-parallel-size) but the workload gets 8 devices "
        "(1 pod(s) x 8 chips); set it to 8"
    )
    assert check(pod(V6E, "2x4", 8, args=["--tensor_parallel_size", "8"])) == []
    assert check(pod(V6E, "2x4", 8, command=["serve", "-tp", "8"])) == []
    (problem,) = check(pod(V6E, "2x4", 8), notes={TENSOR_PARALLEL: "16"})
    assert problem.startswith(f"tensor-parallel size 16 (annotation {TENSOR_PARALLEL}) but the workload gets 8")


def test_pipeline_parallelism_divides_the_devices():
    # tp x pp = devices: 8 devices with pp 2 is tp 4
    assert check(pod(V6E, "2x4", 8, args=["--tensor-parallel-size=4", "--pipeline-parallel-size=2"])) == []
    assert check(pod(V6E, "2x4", 8, args=["-tp", "2", "-pp", "4"])) == []
    (problem,) = check(pod(V6E, "2x4", 8, args=["--tensor-parallel-size=8", "--pipeline_parallel_size", "2"]))
    assert problem.endswith("set it to 4 (with pipeline parallel 2)")
    # a pipeline size that does not divide the devices is the fault, whatever tp says (tp 8 used to pass)
    for tp in ("2", "8"):
        args = [f"--tensor-parallel-size={tp}", "--pipeline-parallel-size=3"]
        (problem,) = check(pod(V6E, "2x4", 8, args=args))
        assert "asks for 3 pipeline stages" in problem and problem.endswith(
            "use a pipeline-parallel size that divides 8"
        )
    # the last flag counts, as in argparse: pp 2 here, so tp 4 is right
    assert check(pod(V6E, "2x4", 8, args=["-pp", "1", "-tp", "4", "-pp", "2"])) == []
    assert check(pod(V6E, "2x4", 8, args=["--tensor-parallel-size=8", "--pipeline-parallel-size=1"])) == []


def test_an_engine_is_read_with_its_own_tensor_parallel_spelling():
    """SGLang-JAX's `--tp-size` (its record's spelling; ledger: sglang.flag.tp-size) is judged like vLLM's flag; vLLM's
    `-tp` is not SGLang's flag (its argparse has none), so it is not read there."""
    sglang = ["python3", "-m", "sgl_jax.launch_server", "--model-path", "Qwen/Qwen3-4B"]
    (problem,) = check(pod(V6E, "2x4", 8, command=[*sglang, "--tp-size=4"]))
    assert problem == (
        "tensor-parallel size 4 (container arg --tp-size) but the workload gets 8 devices (1 pod(s) x 8 chips); "
        "set it to 8"
    )
    (problem,) = check(pod(V6E, "2x4", 8, command=[*sglang, "--tensor-parallel-size", "2"]))
    assert "container arg --tensor-parallel-size" in problem
    assert check(pod(V6E, "2x4", 8, command=[*sglang, "--tp-size", "8"])) == []
    assert check(pod(V6E, "2x4", 8, command=[*sglang, "-tp", "4"])) == []
    # vLLM keeps its own spellings, `-tp` among them
    (problem,) = check(pod(V6E, "2x4", 8, command=["vllm", "serve", "m", "-tp", "4"]))
    assert "container arg -tp" in problem


def test_tpu7x_counts_two_devices_per_chip():
    # one tpu7x-standard-4t node: 4 chips = 8 JAX devices
    assert check(pod(TPU7X, "2x2x1", 4, args=["--tensor-parallel-size=8"])) == []
    (problem,) = check(pod(TPU7X, "2x2x1", 4, args=["--tensor-parallel-size=4"]))
    assert "but the workload gets 8 devices (1 pod(s) x 4 chips); set it to 8" in problem


def test_a_non_numeric_size_is_not_judged():
    assert check(pod(V6E, "2x4", 8), notes={TENSOR_PARALLEL: "auto"}) == []


# -- MaxText mesh ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "axes,devices,ok",
    [
        ([("fsdp", 4), ("tensor", 4)], 16, True),
        ([("fsdp", -1), ("tensor", 4)], 16, True),  # -1: the rest
        ([("fsdp", -1), ("tensor", 3)], 16, False),  # 16 is not a multiple of 3
        ([("fsdp", -1), ("tensor", -1)], 16, False),  # two unknown axes
        ([("fsdp", 0), ("tensor", 4)], 16, False),  # a zero axis
        ([("fsdp", 0), ("tensor", -1)], 16, False),  # a zero axis with a rest axis: refused, not divided by 0
        ([("fsdp", 4), ("tensor", 2)], 16, False),
        ([("fsdp", 16), ("tensor", 1)], 16, True),
        ([("fsdp", -1)], 16, True),
    ],
)
def test_the_mesh_rule(axes, devices, ok):
    assert matching._mesh(axes, devices) is ok


def test_ici_axes_must_multiply_to_the_devices():
    (problem,) = check(pod(V6E, "4x4", 4), notes={PARALLELISM: "fsdp=4,tensor=2"}, pods=4, field="numOfHosts")
    assert problem == (
        f"MaxText ici parallelism fsdp=4 x tensor=2 (annotation {PARALLELISM}) must multiply to the slice's "
        "16 JAX devices (16 chips x 1); change the axes so their product is 16 (one axis may be -1)"
    )
    assert check(pod(V6E, "4x4", 4), notes={PARALLELISM: "ici_fsdp_parallelism=4,tensor=4"}, pods=4) == []


def test_dcn_axes_are_not_part_of_the_ici_product():
    notes = {PARALLELISM: "dcn_data=2,fsdp=16"}
    assert check(pod(V6E, "4x4", 4), notes=notes, pods=4) == []
    (problem,) = check(pod(V6E, "4x4", 4), notes={PARALLELISM: "dcn_data=2,fsdp=8"}, pods=4)
    assert "fsdp=8 (annotation" in problem and "dcn" not in problem.split("(annotation")[0]


def test_two_minus_one_axes_or_a_zero_axis_are_refused():
    for bad in ("fsdp=-1,tensor=-1", "fsdp=0,tensor=16"):
        (problem,) = check(pod(V6E, "4x4", 4), notes={PARALLELISM: bad}, pods=4)
        assert "must multiply to the slice's 16 JAX devices" in problem


def test_ici_flags_in_the_container_args():
    args = ["python3", "train.py", "ici_fsdp_parallelism=8", "ici_tensor_parallelism=1"]
    (problem,) = check(pod(V6E, "4x4", 4, args=args), pods=4)
    assert problem.startswith("MaxText ici parallelism fsdp=8 x tensor=1 (container args ici_*_parallelism)")
    assert check(pod(V6E, "4x4", 4, args=["ici_fsdp_parallelism=-1", "ici_tensor_parallelism=4"]), pods=4) == []


def test_tpu7x_mesh_counts_two_devices_per_chip():
    notes = {PARALLELISM: "fsdp=8"}
    assert check(pod(TPU7X, "2x2x1", 4), notes=notes) == []
    (problem,) = check(pod(TPU7X, "2x2x1", 4), notes={PARALLELISM: "fsdp=4"})
    assert "must multiply to the slice's 8 JAX devices (4 chips x 2)" in problem

"""tpu-workload-matches-pool: TPU pods against the stack's pools (or the catalogue)."""

import pulumi_gcp as gcp

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tpu_stacks.cluster.component import TpuCluster

POLICY = "tpu-workload-matches-pool"
V5E, V6E = "tpu-v5-lite-podslice", "tpu-v6e-slice"


def cluster(*slices, mode="standard"):
    location = "us-central1" if mode == "autopilot" else "us-east5-a"  # Autopilot clusters are regional
    return TpuCluster("c", {"project": "p", "location": location, "mode": mode, "slices": list(slices)})


SAX_POOL = {"generation": "v5e", "topology": "4x8", "name": "sax"}
VLLM_POOL = {"generation": "v6e", "topology": "2x4", "name": "vllm"}
RAY_POOL = {"generation": "v6e", "topology": "4x4", "name": "ray"}


def problems(*builders):
    return of(run(capture(lambda: [build() for build in builders][0])), POLICY)


def test_saxml_jobset_on_its_pool_passes():
    assert problems(lambda: cluster(SAX_POOL), lambda: o.jobset("sax", o.pod(V5E, "4x8", 4), 8)) == []


def test_jobset_asking_for_8_chips_on_4_chip_hosts():
    (problem,) = problems(lambda: cluster(SAX_POOL), lambda: o.jobset("sax", o.pod(V5E, "4x8", 8), 4))
    assert problem.level == "mandatory" and problem.urn.endswith("JobSet::sax")
    assert "requests 8 google.com/tpu per pod" in problem.message
    assert (
        "nodes have 4 chips (pool sax)" in problem.message and "request 4 per pod and run 8 pod(s)" in problem.message
    )


def test_jobset_parallelism_must_equal_the_slice_hosts():
    (problem,) = problems(lambda: cluster(SAX_POOL), lambda: o.jobset("sax", o.pod(V5E, "4x8", 4), 4))
    assert "runs 4 pod(s) per slice" in problem.message and "is 8 hosts" in problem.message
    assert "set spec.replicatedJobs[0].template.spec.parallelism to 8" in problem.message


def test_selectors_must_name_a_slice_some_pool_provides():
    (problem,) = problems(lambda: cluster(SAX_POOL), lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8)))
    assert (
        "no TPU node pool of this stack provides it" in problem.message and "sax (ct5lp-hightpu-4t" in problem.message
    )


def test_autopilot_or_existing_cluster_needs_no_pool_but_still_the_catalogue():
    autopilot = lambda: cluster(VLLM_POOL, mode="autopilot")  # noqa: E731
    assert problems(autopilot, lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8))) == []
    assert problems(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8))) == []  # no cluster resource: an existing one
    (problem,) = problems(autopilot, lambda: o.deployment("vllm", o.pod(V6E, "4x4", 8)))
    assert "request 4 per pod and run 4 pod(s)" in problem.message


def test_deployment_cannot_span_a_multi_host_slice():
    (problem,) = problems(lambda: o.deployment("vllm", o.pod(V6E, "4x4", 4)))
    assert "runs 1 pod(s) per slice" in problem.message and "JobSet or LeaderWorkerSet with 4 pods" in problem.message


def test_raycluster_num_of_hosts_must_equal_the_slice_hosts():
    assert problems(lambda: cluster(RAY_POOL), lambda: o.raycluster("ray", o.pod(V6E, "4x4", 4), 4)) == []
    (problem,) = problems(lambda: cluster(RAY_POOL), lambda: o.raycluster("ray", o.pod(V6E, "4x4", 4), 2))
    assert "set numOfHosts to 4" in problem.message


def test_leader_worker_set_group_counts_only_tpu_pods():
    leader = {"containers": [{"name": "http", "image": "sax-http:v1.2.0"}]}
    build = lambda size: o.leader_worker_set("sax", o.pod(V5E, "4x8", 4), size, leader)  # noqa: E731
    assert problems(lambda: build(9)) == []  # 1 CPU leader + 8 TPU workers, as the LWS Saxml example
    (problem,) = problems(lambda: build(8))
    assert "runs 7 pod(s) per slice" in problem.message and "set size to 8" in problem.message


def test_vllm_tensor_parallel_size_must_equal_the_chips():
    args = ["--model=meta-llama/Llama-3.1-70B", "--tensor-parallel-size=4"]
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 4)
    found = problems(lambda: cluster(VLLM_POOL), lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8, args=args), notes))
    assert len(found) == 2  # the annotation and the container argument
    assert all("set it to 8" in p.message for p in found)
    good = ["--tensor-parallel-size", "8"]
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 8)
    assert (
        problems(lambda: cluster(VLLM_POOL), lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8, args=good), notes)) == []
    )


def test_maxtext_ici_parallelism_must_multiply_to_the_slice():
    notes = o.training_notes("llama3-8b", {"fsdp": 4, "tensor": 2})
    (problem,) = problems(lambda: cluster(RAY_POOL), lambda: o.raycluster("ray", o.pod(V6E, "4x4", 4), 4, notes))
    assert "fsdp=4 x tensor=2" in problem.message and "16 JAX devices" in problem.message
    args = ["python3", "-m", "MaxText.train", "base.yml", "ici_fsdp_parallelism=-1", "ici_tensor_parallelism=4"]
    notes = o.training_notes("llama3-8b", {"fsdp": 4, "tensor": 4})
    assert (
        problems(lambda: cluster(RAY_POOL), lambda: o.raycluster("ray", o.pod(V6E, "4x4", 4, args=args), 4, notes))
        == []
    )
    bad = ["ici_fsdp_parallelism=4", "ici_tensor_parallelism=8"]
    (problem,) = problems(lambda: cluster(RAY_POOL), lambda: o.raycluster("ray", o.pod(V6E, "4x4", 4, args=bad), 4))
    assert "container args" in problem.message


def test_tpu_pod_without_selectors():
    (problem,) = problems(lambda: o.deployment("x", o.pod(None, None, 4)))
    assert "selects no cloud.google.com/gke-tpu-accelerator and cloud.google.com/gke-tpu-topology" in problem.message


def test_raw_pulumi_gcp_pools_are_matched_too():
    def stack():
        gcp.container.Cluster("raw", location="us-central1-a", initial_node_count=1, remove_default_node_pool=True)
        gcp.container.NodePool(
            "tpu",
            cluster="raw",
            location="us-central1-a",
            node_count=2,
            node_config={"machine_type": "ct6e-standard-8t"},
        )
        return o.deployment("vllm", o.pod(V6E, "2x4", 4))

    (problem,) = problems(stack)
    assert "nodes have 8 chips (pool tpu)" in problem.message

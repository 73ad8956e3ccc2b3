"""Pure decisions of the vLLM workload: the slice, the cluster that holds it and the engine's flags,
decided once by `plan_vllm` with no resources and no mocks."""

import pytest

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import tensor_parallel_size
from tpu_stacks.vllm.plan import POOL, plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

CLUSTER = ClusterSpec(project="proj", location="us-central1-b")


def plan(cluster: ClusterSpec = CLUSTER, **spec):
    return plan_vllm(
        VllmSpec(model="meta-llama/Llama-3.1-70B", **spec), cluster, hf_token_given=True, api_key_given=False
    )


def test_the_tutorial_slice_and_its_one_pool_are_decided_together():
    decided = plan()
    shape = decided.shape
    assert (shape.generation, shape.topology, shape.machine_type) == ("v6e", "2x4", "ct6e-standard-8t")
    (pool,) = decided.cluster.pools  # the cluster holds exactly the slice the model was sized for
    assert pool is decided.pool and pool.name == POOL and pool.shape == shape
    assert (pool.autoscaling_min, pool.autoscaling_max) == (1, 2)  # one TPU VM per replica
    assert decided.tensor_parallel_size == tensor_parallel_size(shape) == 8
    assert "--tensor-parallel-size=8" in decided.engine_args()
    assert decided.cluster.spec.addons.gcs_fuse and decided.cluster.spec.addons.managed_prometheus


def test_replicas_bound_the_pool_and_capacity_follows_the_section():
    decided = plan(replicas={"min": 2, "max": 4}, spot=True)
    assert (decided.pool.autoscaling_min, decided.pool.autoscaling_max) == (2, 4)
    assert decided.pool.spot and decided.pool.node_selector()["cloud.google.com/gke-spot"] == "true"


def test_the_sovereign_region_stays_whole():
    """u-france-east1 has three dash-separated parts and is still a region (it once became U-FRANCE)."""
    sovereign = ClusterSpec(project="proj", location="u-france-east1-a", universe="s3ns")
    assert plan(sovereign).cluster.region == "u-france-east1"


@pytest.mark.parametrize(
    ("cluster", "spec", "message"),
    [
        (CLUSTER, {"reservation": "Bad_Res"}, "vllm.reservation: 'Bad_Res' is not a reservation name"),
        (CLUSTER, {"spot": True, "reservation": "r1"}, "vllm.spot: True cannot consume a reservation"),
        (
            CLUSTER.model_copy(update={"slices": [{"generation": "v6e", "topology": "2x4"}]}),
            {},
            "cluster.slices: '1 slice(s)' are derived from vllm.model",
        ),
        (
            ClusterSpec(project="proj", location="us-central1-b", addons={"gcsFuse": False}),
            {},
            "cluster.addons.gcsFuse: False is required by VllmStack",
        ),
    ],
)
def test_refusals_name_the_key_the_user_wrote(cluster, spec, message):
    with pytest.raises(UserError) as refused:
        plan(cluster, **spec)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("mode", ["remote", "standard"])
def test_the_default_repository_is_the_stacks_own(mode):
    """Repository ids are unique per project and region: the default carries the stack's cluster name."""
    registry = {"mode": mode, "image": "vllm-tpu:v0.9.2"} if mode == "standard" else {"mode": mode}
    named = ClusterSpec(project="proj", location="us-central1-b", name="serving-a")
    assert plan(named, registry=registry).spec.registry.repository == "vllm-tpu-serving-a"
    assert plan(registry=registry).spec.registry.repository == "vllm-tpu-tpu-cluster"  # the default cluster name


def test_a_user_set_repository_is_kept_and_no_registry_has_none():
    assert plan(registry={"mode": "remote", "repository": "shared-mirror"}).spec.registry.repository == "shared-mirror"
    assert plan().spec.registry.repository is None  # mode none declares no repository
    with pytest.raises(UserError, match=r"^vllm.registry.repository: 'Mirror_1' is not a valid Artifact Registry"):
        plan(registry={"mode": "remote", "repository": "Mirror_1"})


def _sidecar(decided) -> tuple[dict[str, str], list]:
    from tpu_stacks.vllm.pod import pod_template

    template = pod_template(decided, decided.pool, {"app": "vllm"}, "bucket", "vllm", None, "image")
    return template.metadata.annotations, template.spec.volumes


def _gib(quantity: str) -> int:
    assert quantity.endswith("Gi"), quantity
    return int(quantity.removesuffix("Gi"))


def test_the_sidecars_ephemeral_storage_covers_the_pods_disk_and_the_staged_download():
    """The sidecar's limit is the pod's only ephemeral-storage limit, so kubelet compares it with the whole
    pod's disk use: the 20 GiB XLA cache and the ~140 GB download the mount may stage (was 10 GiB)."""
    decided = plan()
    annotations, volumes = _sidecar(decided)
    disk = sum(
        _gib(v.empty_dir.size_limit) for v in volumes if v.empty_dir is not None and v.empty_dir.medium != "Memory"
    )
    assert disk == 20  # the XLA compile cache
    weights_gib = decided.verdict.memory.part("weights") / 1024**3
    request = _gib(annotations["gke-gcsfuse/ephemeral-storage-request"])
    limit = _gib(annotations["gke-gcsfuse/ephemeral-storage-limit"])
    assert disk < request < disk + 10  # kept: the cache plus writable layers and logs, not the staging
    assert limit - request >= weights_gib > 130  # plus every weight file the download may stage


def test_without_a_compile_cache_the_sidecar_keeps_only_its_overhead():
    annotations, _ = _sidecar(plan(compile_cache=False))
    assert _gib(annotations["gke-gcsfuse/ephemeral-storage-request"]) < 10

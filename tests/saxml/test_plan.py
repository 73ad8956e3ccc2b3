"""Pure decisions of the saxml workload: the plan, with no resources and no mocks."""

import pytest

from tests.clients import CLIENTS
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.saxml.args import PublishedModelArgs, SaxmlImagesArgs, SaxmlStackArgs
from tpu_stacks.saxml.plan import plan_saxml
from tpu_stacks.saxml.spec import ImagesSpec, PublishedModelSpec, SaxmlSpec
from tpu_stacks.sizing import tensor_parallel_size

SINGLE_HOST = {"model": "meta-llama/Meta-Llama-3-8B", "models": []}  # fits one v5e VM (2x2 by default)


def test_the_plan_carries_the_cluster_its_pools_and_one_shape():
    cluster = ClusterSpec(project="proj", location="us-central1-a")
    for spec in (
        SaxmlSpec(source_ranges=CLIENTS),
        SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST),
        SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST, topology="2x4", replicas=3),
    ):
        plan = plan_saxml(spec, cluster)
        pools = plan.cluster.pools_of(0)
        assert {pool.shape for pool in pools} == {plan.shape}
        assert plan.hosts * plan.chips_per_host == plan.shape.chips
        assert sum(pool.node_count for pool in pools) == plan.slices * plan.hosts
        assert plan.tensor_parallel_size == tensor_parallel_size(plan.shape)
    assert [
        pool.name for pool in plan_saxml(SaxmlSpec(source_ranges=CLIENTS, pool_name="sax-{n}"), cluster).cluster.pools
    ] == [
        "sax-1",
        "sax-2",
    ]


def test_schema_args_and_validated_spec_have_the_same_fields():
    assert set(SaxmlStackArgs.__annotations__) - {"cluster"} == set(SaxmlSpec.model_fields)
    assert set(PublishedModelArgs.__annotations__) == set(PublishedModelSpec.model_fields)
    assert set(SaxmlImagesArgs.__annotations__) == set(ImagesSpec.model_fields)


# -- the numbers and the refusals, pinned (mutation testing found them unasserted) -------------------
# The Saxml tutorial (docs/saxml.md, [K-SAX]): model servers on port 10001 in cell /sax/test, `--platform_chip=tpuv5e`,
# the 175B test model (ICI mesh [1, 1, 32]) on two v5e 4x8 slices of eight 4-chip VMs, published as /sax/test/spmd.

CLUSTER = ClusterSpec(project="proj", location="us-central1-a")


def test_the_tutorial_plan():
    plan = plan_saxml(SaxmlSpec(source_ranges=CLIENTS), CLUSTER)
    assert (plan.shape.topology, plan.hosts, plan.chips_per_host, plan.slices) == ("4x8", 8, 4, 2)
    assert plan.model_server_args() == [
        "--port=10001",
        "--sax_cell=/sax/test",
        "--platform_chip=tpuv5e",
        "--platform_topology=4x8",
    ]
    assert plan.host_network  # multi-host: Saxml's upstream manifests use hostNetwork
    # the tokens held: 128 input + 128 decode steps, batch 1
    assert (plan.request.engine, plan.request.context, plan.request.batch) == ("saxml", 256, 1)
    (published,) = plan.models
    assert published.body() == {
        "model": "/sax/test/spmd",
        "model_path": "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
        "checkpoint": "None",
        "replicas": 2,
    }


def test_single_host_slices_need_no_host_network():
    plan = plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST), CLUSTER)
    assert plan.hosts == 1 and not plan.host_network
    assert plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST, hostNetwork=True), CLUSTER).host_network


@pytest.mark.parametrize(
    ("spec", "cluster", "message"),
    [
        ({"tpuGeneration": "v6e"}, CLUSTER, r"^saxml.tpuGeneration: 'v6e' has no --platform_chip value known"),
        ({"topology": "4x4"}, CLUSTER, r"^saxml.topology: '4x4' cannot hold"),
        (
            {"topology": "8x8"},
            CLUSTER,
            r"^saxml.topology: '8x8' gives 64 devices but .*needs exactly 32; set saxml.topology: 4x8$",
        ),
        ({"jobset": {"version": "0.12"}}, CLUSTER, r"^saxml.jobset.version: '0.12' is not a JobSet release tag"),
        ({"jobset": {"version": "v0.11.9"}}, CLUSTER, r"^saxml.jobset.version: 'v0.11.9' lacks the RestartJob"),
        ({}, CLUSTER.model_copy(update={"mode": "autopilot"}), r"^cluster.mode: 'autopilot' does not allow"),
        ({}, CLUSTER.model_copy(update={"min_version": "1.27"}), r"^cluster.minVersion: '1.27' needs privileged"),
        (
            {"models": [{"model": "/sax/test/a", "replicas": 3}]},
            CLUSTER,
            r"^saxml.models\[0\].replicas: 3 needs 3 model servers but the stack runs 2 slice\(s\)",
        ),
        (
            {"models": [{"model": "/sax/test/a"}, {"model": "/sax/test/a"}]},
            CLUSTER,
            r"^saxml.models\[1\].model: '/sax/test/a' is published twice",
        ),
        ({"models": [{"model": "spmd"}]}, CLUSTER, r"^saxml.models\[0\].model: 'spmd' is not a model name"),
        (
            {"models": [{"checkpoint": "s3://x"}]},
            CLUSTER,
            r"^saxml.models\[0\].checkpoint: 's3://x' is neither None nor a gs:// path",
        ),
    ],
)
def test_refusals_name_the_key(spec, cluster, message):
    with pytest.raises(UserError, match=message):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **spec), cluster)


def test_a_minimum_version_from_1_28_runs_unprivileged():
    assert (
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS), CLUSTER.model_copy(update={"min_version": "1.28"})).shape.topology
        == "4x8"
    )


def test_more_published_replicas_than_servers_must_fit_together():
    two = [{"model": "/sax/test/a", "replicas": 2}, {"model": "/sax/test/b", "replicas": 2}]
    with pytest.raises(UserError, match=r"^saxml.models: '4 replicas on 2 model servers' would make servers hold"):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, models=two), CLUSTER)
    exact = [{"model": "/sax/test/a", "replicas": 1}, {"model": "/sax/test/b", "replicas": 1}]
    assert [m.replicas for m in plan_saxml(SaxmlSpec(source_ranges=CLIENTS, models=exact), CLUSTER).models] == [1, 1]


def test_the_nodes_run_as_the_saxml_account_unless_the_cluster_names_one():
    email = "sax-nodes@proj.iam.gserviceaccount.com"
    plan = plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST, nodeServiceAccount=email), CLUSTER)
    assert plan.cluster.spec.node_service_account == email
    own = CLUSTER.model_copy(update={"node_service_account": "cluster-nodes@proj.iam.gserviceaccount.com"})
    assert plan_saxml(
        SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST, nodeServiceAccount=email), own
    ).cluster.spec.node_service_account == ("cluster-nodes@proj.iam.gserviceaccount.com")
    assert (
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST), CLUSTER).cluster.spec.node_service_account is None
    )
    with pytest.raises(UserError, match=r"^saxml.nodeServiceAccount: 'sax-nodes' is not a service account email"):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST, nodeServiceAccount="sax-nodes"), CLUSTER)
    default = "123456789012-compute@developer.gserviceaccount.com"
    with pytest.raises(UserError, match=r"^saxml.nodeServiceAccount: '123456789012-compute@.*' is the Compute Engine"):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **SINGLE_HOST, nodeServiceAccount=default), CLUSTER)


def test_published_paths_are_required_for_a_catalogue_model_and_checked_when_known():
    llama = {"model": "meta-llama/Meta-Llama-3-8B"}
    with pytest.raises(UserError, match=r"^saxml.models\[0\].modelPath is required: saxml.model meta-llama/Meta"):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **llama, models=[{"model": "/sax/test/a"}]), CLUSTER)
    unknown = [{"model": "/sax/test/a", "modelPath": "saxml.server.custom.Foo"}]  # not in the catalogue: unchecked
    assert (
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **llama, models=unknown), CLUSTER).models[0].model_path
        == "saxml.server.custom.Foo"
    )
    too_big = [{"model": "/sax/test/a", "modelPath": "meta-llama/Llama-3.1-70B"}]
    with pytest.raises(UserError, match=r"^saxml.models\[0\].modelPath: 'meta-llama/Llama-3.1-70B' needs .* more than"):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, **llama, models=too_big), CLUSTER)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"gsaName": "Sax"}, r"^saxml.gsaName: 'Sax' is not a valid service account id"),
        ({"checkpointBuckets": ["gs://b"]}, r"^saxml.checkpointBuckets\[0\]: 'gs://b' is a URL, not a bucket name"),
        ({"checkpointBuckets": ["goog-x"]}, r"^saxml.checkpointBuckets\[0\]: 'goog-x' starts with 'goog'"),
    ],
)
def test_names_are_refused_when_the_section_is_parsed(spec, message):
    from tpu_stacks.inputs.validation import parse

    with pytest.raises(UserError, match=message):
        parse(SaxmlSpec, spec, "saxml")


@pytest.mark.parametrize("version", ["v0.12.0", "v0.12.3", "v1.0.0"])
def test_jobset_from_v0_12_0_has_the_restart_job_actions(version):
    """JobSet v0.12.0 is the first release whose CRD has the failure policy's RestartJob actions."""
    assert (
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, jobset={"version": version}), CLUSTER).spec.jobset.version
        == version
    )


@pytest.mark.parametrize("version", ["v0.11.9", "v0.9.20", "v0.2.0"])
def test_jobset_before_v0_12_0_is_refused(version):
    with pytest.raises(UserError, match=rf"^saxml.jobset.version: '{version}' lacks the RestartJob"):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, jobset={"version": version}), CLUSTER)


def test_the_topology_a_mesh_needs_counts_jax_devices():
    """v5e: one JAX device per chip, 32 devices = 4x8; tpu7x: two per chip, 8 devices = 4 chips = 2x2x1
    ([D-v5e]); no v5e topology has 2 chips, so the fix names the device count."""
    from tpu_stacks.saxml.plan import _topology_with

    assert (_topology_with("v5e", 32), _topology_with("tpu7x", 8)) == ("4x8", "2x2x1")
    assert _topology_with("v5e", 2) == "a slice of 2 devices"


def test_models_that_fill_the_servers_to_the_byte_fit_together(monkeypatch):
    """The rule of one model's fit (sizing: total <= usable) holds for models sharing servers: a slice may
    be filled to the byte, one byte more is refused. Sizing is stubbed to give exact sums."""
    from types import SimpleNamespace

    from tpu_stacks.catalog.models import SAXML_175B_TEST
    from tpu_stacks.saxml import plan as saxml_plan

    plan = plan_saxml(SaxmlSpec(source_ranges=CLIENTS), CLUSTER)
    two = [
        saxml_plan.PublishedModel(model=f"/sax/test/{name}", model_path=SAXML_175B_TEST, checkpoint="None", replicas=1)
        for name in ("a", "b")
    ]
    usable = 100 * 1024**3
    for each, fits in ((usable // 2, True), (usable // 2 + 1, False)):
        verdict = SimpleNamespace(memory=SimpleNamespace(total_bytes=each), usable_bytes=usable)
        monkeypatch.setattr(saxml_plan, "judge", lambda request, shape, verdict=verdict: verdict)
        if fits:
            saxml_plan._check_shared_servers(two, 1, plan.shape, plan.request)
        else:
            with pytest.raises(UserError, match=r"^saxml.models: '2 replicas on 1 model servers'"):
                saxml_plan._check_shared_servers(two, 1, plan.shape, plan.request)


def test_the_slices_reservation_reaches_every_pool():
    pools = plan_saxml(SaxmlSpec(source_ranges=CLIENTS, reservation="res-1"), CLUSTER).cluster.pools
    assert [(p.name, p.reservation) for p in pools] == [("tpu1", "res-1"), ("tpu2", "res-1")]
    assert {
        p.reservation for p in plan_saxml(SaxmlSpec(source_ranges=CLIENTS, reservation=""), CLUSTER).cluster.pools
    } == {None}


def test_a_checkpoint_path_follows_the_bucket_rule():
    """The gs:// path rule is the bucket-name rule: a bucket Cloud Storage reserves is refused here too."""
    with pytest.raises(
        UserError,
        match=r"^saxml.models\[0\].checkpoint: 'gs://goog-ckpt/x' names bucket 'goog-ckpt', which starts with 'goog', "
        r"which Cloud Storage reserves",
    ):
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, models=[{"checkpoint": "gs://goog-ckpt/x"}]), CLUSTER)
    assert (
        plan_saxml(SaxmlSpec(source_ranges=CLIENTS, models=[{"checkpoint": "gs://ckpt/x"}]), CLUSTER)
        .models[0]
        .checkpoint
        == "gs://ckpt/x"
    )

"""Pure decisions of a cluster: pools from slices, and the helpers workloads plan their cluster with."""

import pytest

from tpu_stacks.cluster.component import MIN_MASTER_VERSION, cluster_ignore_changes
from tpu_stacks.cluster.plan import (
    plan_cluster,
    plan_workload_cluster,
    refuse_given_slices,
    require_addons,
    require_ray_operator,
)
from tpu_stacks.cluster.spec import ClusterSpec, SliceSpec
from tpu_stacks.errors import UserError


def spec(**fields) -> ClusterSpec:
    return ClusterSpec(project="proj", location=fields.pop("location", "us-central1-b"), **fields)


def test_pools_of_groups_the_pools_of_each_slice_spec():
    decided = plan_cluster(
        spec(
            location="us-east5-a",  # a zone that offers both v5e and v6e (catalog/locations.py)
            slices=[SliceSpec(generation="v5e", topology="4x8", count=2), SliceSpec(generation="v6e", topology="2x4")],
        )
    )
    assert [pool.name for pool in decided.pools_of(0)] == ["tpu-v5e-4x8-1", "tpu-v5e-4x8-2"]
    assert [pool.name for pool in decided.pools_of(1)] == ["tpu-v6e-2x4"]
    assert decided.pools_of(2) == ()


@pytest.mark.parametrize(
    ("location", "universe", "region"),
    [
        ("us-central1-b", "google", "us-central1"),
        ("us-central1", "google", "us-central1"),
        ("u-france-east1-a", "s3ns", "u-france-east1"),
    ],
)
def test_the_cluster_region(location, universe, region):
    assert plan_cluster(spec(location=location, universe=universe)).region == region


def test_a_workload_slice_error_is_keyed_as_the_workload_spells_it():
    workload_slice = SliceSpec(generation="v6e", topology="2x4", spot=True, reservation="r1")
    with pytest.raises(UserError, match=r"^jetstream\.spot: True cannot consume a reservation"):
        plan_workload_cluster(spec(), workload_slice, {"spot": "jetstream.spot"}, "jetstream.model")
    with pytest.raises(UserError, match=r"^cluster\.slices\[0\]\.spot: True"):  # unmapped keys stay as they are
        plan_workload_cluster(spec(), workload_slice, {}, "jetstream.model")


def test_given_slices_are_refused_where_a_workload_derives_them():
    with pytest.raises(UserError, match=r"^cluster\.slices: '1 slice\(s\)' are derived from saxml\.model"):
        refuse_given_slices(spec(slices=[SliceSpec(generation="v6e", topology="2x4")]), "saxml.model")
    refuse_given_slices(spec(), "saxml.model")  # none given: nothing to refuse


def test_required_addons_are_turned_on_unless_the_user_turned_them_off():
    assert require_addons(spec(), "RayTrainStack", "ray_operator").addons.ray_operator is True
    with pytest.raises(UserError, match=r"^cluster\.addons\.rayOperator: False is required by RayTrainStack"):
        require_addons(spec(addons={"rayOperator": False}), "RayTrainStack", "ray_operator")


def test_a_ray_workload_turns_on_gkes_ray_add_on_unless_the_user_names_a_kuberay_of_their_own():
    assert require_ray_operator(spec(), "RayTrainStack").addons.ray_operator is True
    own = require_ray_operator(spec(kuberay={"namespace": "kuberay-system"}), "RayTrainStack")
    assert own.addons.ray_operator is False and plan_cluster(own).spec.kuberay.namespace == "kuberay-system"
    with pytest.raises(
        UserError, match=r"^cluster\.addons\.rayOperator: False leaves VllmStack without a KubeRay"
    ) as off:
        require_ray_operator(spec(addons={"rayOperator": False}), "VllmStack")
    assert "cluster.kuberay.namespace" in str(off.value) and "\n" not in str(off.value)


def test_gkes_ray_add_on_beside_a_kuberay_of_the_users_own_is_refused():
    both = spec(kuberay={"namespace": "default"}, addons={"rayOperator": True})
    with pytest.raises(
        UserError, match=r"^cluster\.addons\.rayOperator: True turns on GKE's Ray add-on beside"
    ) as error:
        plan_cluster(require_ray_operator(both, "RayTrainStack"))
    assert "namespace default" in str(error.value) and "\n" not in str(error.value)


def test_the_kuberay_namespace_is_a_kubernetes_name():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        spec(kuberay={"namespace": "Ray_System"})
    with pytest.raises(ValidationError):
        spec(kuberay={})


def test_queued_provisioning_is_decided_as_flex_start_with_its_companions():
    queued, flex, spot, plain = plan_cluster(
        spec(
            slices=[
                SliceSpec(generation="v6e", topology="4x4", name="queued", queuedProvisioning=True),
                SliceSpec(generation="v6e", topology="4x4", name="flex", flexStart=True),
                SliceSpec(generation="v6e", topology="2x4", name="spot", spot=True),
                SliceSpec(generation="v6e", topology="2x4", name="plain"),
            ]
        )
    ).pools
    assert (queued.flex_start, queued.queued_provisioning) == (True, True)
    for pool in (queued, flex):
        assert (pool.auto_repair, pool.location_policy, pool.reservation_affinity) == (False, "ANY", "NO_RESERVATION")
        assert (pool.autoscaling_min, pool.autoscaling_max, pool.node_count) == (0, 4, None)
    assert queued.node_labels() == {"tpu-stacks/slice": "queued", "cloud.google.com/gke-queued": "true"}
    assert flex.node_labels() == {"tpu-stacks/slice": "flex"}
    assert (spot.auto_repair, spot.location_policy, spot.reservation_affinity) == (True, None, "NO_RESERVATION")
    assert (plain.auto_repair, plain.location_policy, plain.reservation_affinity) == (True, None, None)


def test_queued_provisioning_on_a_tpu_gke_refused_it_for():
    with pytest.raises(UserError, match=r"^cluster\.slices\[0\]\.queuedProvisioning: True is not known to work"):
        plan_cluster(spec(slices=[SliceSpec(generation="v5p", topology="2x2x2", queuedProvisioning=True)]))
    plan_cluster(
        spec(location="us-central1-a", slices=[SliceSpec(generation="v5p", topology="2x2x2", flexStart=True)])
    )  # flex-start alone


def test_system_is_refused_only_where_the_system_pool_is_declared():
    with pytest.raises(UserError, match=r"^cluster\.slices\[0\]\.name: 'system' is the name of the cluster's CPU"):
        plan_cluster(spec(slices=[SliceSpec(generation="v6e", topology="2x4", name="system")]))
    existing = {"name": "prod", "location": "us-central1-b", "createPools": True}
    pools = plan_cluster(spec(existing=existing, slices=[SliceSpec(generation="v6e", topology="2x4", name="system")]))
    assert [pool.name for pool in pools.pools] == ["system"]  # no system pool of ours in an existing cluster


# --- every decision pinned to the catalogue's facts (catalog/tpu.py sources each) ---------------------


def refusal(**fields) -> str:
    with pytest.raises(UserError) as caught:
        plan_cluster(spec(**fields))
    return str(caught.value)


def one_pool(**slice_fields):
    (pool,) = plan_cluster(spec(slices=[SliceSpec(**slice_fields)])).pools
    return pool


def test_a_multi_host_pool_is_the_whole_slice_with_the_catalogues_pod_limit():
    """v6e 4x4 on ct6e-standard-4t: 16 chips / 4 per VM = 4 nodes; multi-host pools: 15 pods per node
    (GKE's TPU multi-host limit, catalogue MULTI_HOST_MAX_PODS_PER_NODE); COMPACT placement."""
    pool = one_pool(generation="v6e", topology="4x4")
    assert (pool.name, pool.zone, pool.node_count, pool.autoscaling_min, pool.autoscaling_max) == (
        "tpu-v6e-4x4",
        "us-central1-b",
        4,
        None,
        None,
    )
    assert (pool.multi_host, pool.max_pods_per_node, pool.uses_workload_policy) == (True, 15, False)
    single = one_pool(generation="v6e", topology="2x4")
    assert (single.multi_host, single.max_pods_per_node, single.uses_workload_policy, single.node_count) == (
        False,
        None,
        False,
        1,
    )


def test_tpu7x_multi_host_uses_a_workload_policy_and_keeps_its_own_name_prefix():
    """Ironwood (tpu7x) multi-host slices are placed by a workload policy ([XPK], [CTK]), not COMPACT;
    its accelerator label already starts with 'tpu', so the pool is tpu7x-..., not tpu-tpu7x-..."""
    decided = plan_cluster(
        spec(
            location="us-central1-c",
            min_version="1.34.3-gke.1318000",
            slices=[SliceSpec(generation="tpu7x", topology="4x4x4")],
        )
    )
    (pool,) = decided.pools
    assert (pool.name, pool.uses_workload_policy, pool.node_count) == ("tpu7x-4x4x4", True, 16)  # 64 chips / 4
    assert decided.generations == ["tpu7x"]


def test_the_pool_name_numbers_slices_as_the_user_places_the_number():
    names = [
        p.name
        for p in plan_cluster(
            spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="4x8", count=3)])
        ).pools
    ]
    assert names == ["tpu-v5e-4x8-1", "tpu-v5e-4x8-2", "tpu-v5e-4x8-3"]
    saxml = [
        p.name
        for p in plan_cluster(
            spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="4x8", count=2, name="tpu{n}")])
        ).pools
    ]
    assert saxml == ["tpu1", "tpu2"]  # the Saxml tutorial's pools
    assert [
        p.name
        for p in plan_cluster(
            spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="4x8", name="big")])
        ).pools
    ] == ["big"]
    # identical single-host slices share one pool (one node each), so the name takes no number
    (shared,) = plan_cluster(
        spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="2x2", count=3)])
    ).pools
    assert (shared.name, shared.node_count) == ("tpu-v5e-2x2", 3)


def test_identical_single_host_slices_scale_as_one_pool():
    (scaled,) = plan_cluster(
        spec(
            location="us-east5-a",
            slices=[SliceSpec(generation="v5e", topology="2x2", count=3, autoscaling={"maxNodes": 3})],
        )
    ).pools
    assert (scaled.node_count, scaled.autoscaling_min, scaled.autoscaling_max) == (None, 0, 3)
    (same,) = plan_cluster(
        spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="2x2", count=3, nodes=3)])
    ).pools
    assert same.node_count == 3  # nodes equal to count: no contradiction
    assert "cluster.slices[0].nodes: 2 contradicts count 3" in refusal(
        location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="2x2", count=3, nodes=2)]
    )
    assert "cluster.slices[0].autoscaling.maxNodes: 2 is below count 3" in refusal(
        location="us-east5-a",
        slices=[SliceSpec(generation="v5e", topology="2x2", count=3, autoscaling={"maxNodes": 2})],
    )
    (one,) = plan_cluster(
        spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="2x2", nodes=2)])
    ).pools
    assert one.node_count == 2  # count 1: the user's fixed node count


def test_capacity_selectors_are_gkes_labels_for_each_capacity_type():
    """The labels GKE sets per capacity type, which Autopilot pods select ([XPK])."""
    gen = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"}
    spot = one_pool(generation="v6e", topology="2x4", spot=True)
    assert spot.node_selector() == {**gen, "cloud.google.com/gke-spot": "true"}
    queued = one_pool(generation="v6e", topology="2x4", queuedProvisioning=True)
    assert queued.capacity_selector() == {"cloud.google.com/gke-queued": "true"}
    flex = one_pool(generation="v6e", topology="2x4", flexStart=True)
    assert flex.capacity_selector() == {"cloud.google.com/gke-flex-start": "true"}
    reserved = one_pool(generation="v6e", topology="2x4", reservation="res-1")
    assert reserved.capacity_selector() == {"cloud.google.com/reservation-name": "res-1"}
    assert reserved.reservation_affinity == "SPECIFIC_RESERVATION"
    assert (reserved.auto_repair, reserved.location_policy) == (True, None)
    plain = one_pool(generation="v6e", topology="2x4")
    assert plain.node_selector() == gen and plain.node_labels() == {"tpu-stacks/slice": "tpu-v6e-2x4"}


def test_the_cluster_plan_reports_its_pool_generations_and_mode():
    decided = plan_cluster(
        spec(
            location="us-east5-a",
            slices=[SliceSpec(generation="v6e", topology="2x4"), SliceSpec(generation="v5e", topology="2x2")],
        )
    )
    assert decided.generations == ["v5e", "v6e"]  # sorted, each once
    assert (decided.workload_pool, decided.autopilot, decided.regional) == ("proj.svc.id.goog", False, False)
    assert decided.node_locations == ("us-east5-a",)  # a zonal cluster's own zone
    auto = plan_cluster(
        spec(location="us-central1", mode="autopilot", slices=[SliceSpec(generation="v6e", topology="2x4")])
    )
    assert (auto.autopilot, auto.regional, auto.node_locations) == (True, True, ())
    (virtual,) = auto.pools
    assert (virtual.autopilot, virtual.zone) == (True, "")  # Autopilot places the nodes; no zone is chosen
    zoned = plan_cluster(
        spec(
            location="us-central1",
            mode="autopilot",
            slices=[SliceSpec(generation="v6e", topology="2x4", zone="us-central1-b")],
        )
    )
    assert zoned.pools[0].zone == "us-central1-b"


def test_a_regional_cluster_places_tpu_pools_in_one_zone():
    one_zone = plan_cluster(
        spec(
            location="us-east5",
            node_locations=["us-east5-a"],
            slices=[SliceSpec(generation="v6e", topology="4x4")],
        )
    )
    assert (one_zone.regional, one_zone.node_locations, one_zone.pools[0].zone) == (
        True,
        ("us-east5-a",),
        "us-east5-a",
    )
    two = ["us-east5-a", "us-east5-b"]
    multi_host = refusal(location="us-east5", node_locations=two, slices=[SliceSpec(generation="v6e", topology="4x4")])
    assert multi_host == (
        "cluster.slices[0].zone: None is missing: COMPACT placement of the multi-host 4x4 slice needs exactly "
        "one zone; set the slice's zone"
    )
    single_host = refusal(location="us-east5", node_locations=two, slices=[SliceSpec(generation="v6e", topology="2x4")])
    assert single_host.startswith("cluster.slices[0].zone: None is missing for a regional cluster")
    placed = plan_cluster(
        spec(
            location="us-east5",
            node_locations=two,
            slices=[SliceSpec(generation="v6e", topology="4x4", zone="us-east5-b")],
        )
    )
    assert placed.pools[0].zone == "us-east5-b" and placed.node_locations == tuple(two)
    assert refusal(location="us-east5", slices=[SliceSpec(generation="v6e", topology="2x4")]).startswith(
        "cluster.slices[0].zone: None is missing for a regional cluster"
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"location": "us-central"}, "cluster.location: 'us-central' is neither a zone nor a region"),
        (
            {"location": "us-central1-a", "mode": "autopilot"},
            "cluster.location: 'us-central1-a' is a zone, and Autopilot clusters are regional; use us-central1",
        ),
        (
            {"location": "us-central1", "node_locations": ["us-central1-a", "us-east1-b"]},
            "cluster.nodeLocations[1]: 'us-east1-b' is not a zone of us-central1; use zones like us-central1-a",
        ),
        ({"location": "us-central1", "node_locations": ["us-central1"]}, "'us-central1' is not a zone of us-central1"),
        (
            {"slices": [SliceSpec(generation="v5e", topology="2x2", zone="us-east1-b")]},
            "cluster.slices[0].zone: 'us-east1-b' is not a zone of us-central1; use a zone like us-central1-a",
        ),
        (
            {"location": "us-central1", "slices": [SliceSpec(generation="v5e", topology="2x2", zone="us-central1")]},
            "cluster.slices[0].zone: 'us-central1' is not a zone of us-central1",
        ),
        ({"node_service_account": "nodes"}, "cluster.nodeServiceAccount: 'nodes' is not a service account email"),
        ({"name": "Prod"}, "cluster.name: 'Prod' is not a valid GKE cluster name"),
        (
            {"system_pool": {"machine_type": "ct6e-standard-4t"}},
            "cluster.systemPool.machineType: 'ct6e-standard-4t' is a TPU machine type",
        ),
        (
            {"slices": [SliceSpec(generation="v6e", topology="2x4"), SliceSpec(generation="v5e", topology="2x9")]},
            "cluster.slices[1].topology: '2x9' is not a v5e topology",
        ),
        (
            {
                "slices": [
                    SliceSpec(generation="v5e", topology="2x2", name="a"),
                    SliceSpec(generation="v6e", topology="2x4", name="a"),
                ]
            },
            "cluster.slices[].name: 'a' names two node pools; give each slice a distinct name",
        ),
        (
            {
                "slices": [
                    SliceSpec(generation="v6e", topology="2x4"),
                    SliceSpec(generation="v5e", topology="2x2", name="Big"),
                ]
            },
            "cluster.slices[1].name: 'Big' is not a valid node pool name",
        ),
    ],
)
def test_refusals_name_the_key_the_value_and_the_fix(fields, problem):
    assert problem in refusal(**fields)


def test_a_valid_service_account_and_a_regional_cluster_with_zones_are_accepted():
    decided = plan_cluster(
        spec(
            location="us-central1",
            node_locations=["us-central1-a", "us-central1-f"],
            node_service_account="tpu-nodes@proj.iam.gserviceaccount.com",
        )
    )
    assert (decided.regional, decided.node_locations, decided.pools) == (True, ("us-central1-a", "us-central1-f"), ())


def test_a_generation_newer_than_the_channels_needs_a_minimum_version():
    """Release channels offered about GKE 1.33 when the catalogue was written; tpu7x needs 1.34.3-gke.1318000
    ([CTK] examples/gke-tpu-7x), v6e 1.31.2-gke.1115000 ([RAY]), within every channel."""
    ironwood = [SliceSpec(generation="tpu7x", topology="2x2x1")]
    assert refusal(location="us-central1-c", slices=ironwood) == (
        "cluster.minVersion is required for TPU tpu7x, which needs GKE 1.34.3-gke.1318000; set cluster.minVersion "
        "to 1.34.3-gke.1318000 or later (source: [CTK] examples/gke-tpu-7x)"
    )
    assert refusal(location="us-central1-c", slices=ironwood, min_version="1.34.3-gke.1317999").startswith(
        "cluster.minVersion: '1.34.3-gke.1317999' is older than TPU tpu7x supports in standard mode; "
        "use 1.34.3-gke.1318000 or later"
    )
    assert (
        plan_cluster(spec(location="us-central1-c", slices=ironwood, min_version="1.34.3-gke.1318000")).pools[0].name
        == "tpu7x-2x2x1"
    )
    existing = {"name": "prod", "location": "us-central1-c", "createPools": True}
    assert plan_cluster(
        spec(location="us-central1-c", slices=ironwood, existing=existing)
    ).pools  # an existing cluster's version is its own
    v6e = [SliceSpec(generation="v6e", topology="2x4")]
    assert plan_cluster(spec(slices=v6e)).pools  # 1.33 > 1.31.2: the channel's version will do
    assert "'1.31.2-gke.1114000' is older than TPU v6e supports in standard mode" in refusal(
        slices=v6e, min_version="1.31.2-gke.1114000"
    )
    assert plan_cluster(spec(slices=v6e, min_version="1.31.2-gke.1115000")).pools
    assert "cluster.minVersion: 'banana' is not a GKE version" in refusal(slices=v6e, min_version="banana")


def test_autopilot_checks_the_autopilot_minimum():
    """v6e on Autopilot: 1.31.2-gke.1384000 (catalogue), above the Standard minimum 1.31.2-gke.1115000."""
    v6e = [SliceSpec(generation="v6e", topology="2x4")]
    problem = refusal(location="us-central1", mode="autopilot", slices=v6e, min_version="1.31.2-gke.1200000")
    assert "'1.31.2-gke.1200000' is older than TPU v6e supports in autopilot mode; use 1.31.2-gke.1384000" in problem
    assert plan_cluster(spec(slices=v6e, min_version="1.31.2-gke.1200000")).pools  # Standard: fine
    ironwood = [SliceSpec(generation="tpu7x", topology="2x2x1")]
    assert "is required for TPU tpu7x" in refusal(location="us-central1", mode="autopilot", slices=ironwood)


def test_an_adopted_cluster_gets_no_minimum_version():
    """`cluster.minVersion` is the floor of a cluster the stack creates (`minMasterVersion` at create, then ignored);
    an adopted cluster (`cluster.existing`) keeps the version it runs: no floor is sent and none is ignored, even
    when the spec names one or a generation needs a newer GKE than the channels' (tpu7x)."""
    ironwood = [SliceSpec(generation="tpu7x", topology="2x2x1")]
    existing = {"name": "prod", "location": "us-central1-c", "createPools": True}
    for min_version in (None, "1.34.3-gke.1318000"):
        adopted = plan_cluster(
            spec(location="us-central1-c", slices=ironwood, existing=existing, min_version=min_version)
        )
        assert adopted.pools and adopted.version_floor is None
        assert MIN_MASTER_VERSION not in cluster_ignore_changes(adopted)
    created = plan_cluster(spec(location="us-central1-c", slices=ironwood, min_version="1.34.3-gke.1318000"))
    assert created.version_floor == "1.34.3-gke.1318000" and MIN_MASTER_VERSION in cluster_ignore_changes(created)


def test_an_existing_cluster_is_where_its_pools_go():
    existing = {"name": "prod", "location": "europe-west4-a", "project": "other", "createPools": True}
    decided = plan_cluster(spec(existing=existing, slices=[SliceSpec(generation="v6e", topology="2x4")]))
    assert (decided.spec.name, decided.spec.location, decided.spec.project) == ("prod", "europe-west4-a", "other")
    assert decided.pools[0].zone == "europe-west4-a" and decided.workload_pool == "other.svc.id.goog"
    same_project = plan_cluster(spec(existing={"name": "prod", "location": "us-east5-b"}))
    assert (same_project.spec.project, same_project.region) == ("proj", "us-east5")


def test_queued_provisioning_turns_flex_start_on_and_flex_start_alone_does_not_queue():
    queued = one_pool(generation="v6e", topology="2x4", queuedProvisioning=True)
    flex = one_pool(generation="v6e", topology="2x4", flexStart=True)
    assert (queued.flex_start, queued.queued_provisioning, queued.dynamic_workload_scheduler) == (True, True, True)
    assert (flex.flex_start, flex.queued_provisioning, flex.dynamic_workload_scheduler) == (True, False, True)
    plain = one_pool(generation="v6e", topology="2x4", threadsPerCore=1, maxRunDuration="3600s")
    assert (plain.flex_start, plain.dynamic_workload_scheduler) == (False, False)
    assert (plain.threads_per_core, plain.max_run_duration) == (1, "3600s")


def test_a_workload_plan_reads_shape_pools_and_tensor_parallelism_from_its_verdict_and_cluster():
    from tpu_stacks.catalog.models import lookup_model
    from tpu_stacks.catalog.tpu import slice_shape
    from tpu_stacks.cluster.plan import WorkloadPlan
    from tpu_stacks.sizing import ServingRequest, judge

    shape = slice_shape("tpu7x", "2x2x2")  # 8 chips on two VMs, 2 JAX devices per chip: tensor parallel 16
    model = lookup_model("llama3-8b")
    cluster = plan_cluster(
        spec(
            location="us-central1-c",
            min_version="1.35",
            slices=[SliceSpec(generation="tpu7x", topology="2x2x2", count=2, name="w{n}")],
        )
    )
    plan = WorkloadPlan(model=model, verdict=judge(ServingRequest(model=model), shape), cluster=cluster)
    assert plan.shape == shape and plan.tensor_parallel_size == 16
    assert [p.name for p in plan.pools] == ["w1", "w2"] and plan.pool.name == "w1"


def test_autopilot_has_no_system_pool_and_places_multi_host_slices_itself():
    regional = {"location": "us-central1", "mode": "autopilot", "node_locations": ["us-central1-a", "us-central1-c"]}
    decided = plan_cluster(spec(**regional, slices=[SliceSpec(generation="v6e", topology="4x4", name="system")]))
    assert [(p.name, p.zone, p.node_count) for p in decided.pools] == [("system", "", 4)]


def test_a_duplicate_name_is_reported_alphabetically_first():
    slices = [SliceSpec(generation="v5e", topology="2x2", name=name) for name in ("b", "b", "a", "a")]
    assert refusal(slices=slices).startswith("cluster.slices[].name: 'a' names two node pools")


def test_an_add_on_the_user_turned_on_stays_on():
    chosen = require_addons(
        spec(addons={"rayOperator": True, "gcsFuse": True}), "RayTrainStack", "ray_operator", "gcs_fuse"
    )
    assert (chosen.addons.ray_operator, chosen.addons.gcs_fuse, chosen.addons.managed_prometheus) == (True, True, True)
    with pytest.raises(UserError, match=r"^cluster\.addons\.gcsFuse: False is required by SaxmlStack"):
        require_addons(spec(addons={"gcsFuse": False}), "SaxmlStack", "ray_operator", "gcs_fuse")


def test_the_autopilot_minimum_is_named_with_its_own_source():
    """tpu7x on Autopilot: the catalogue carries the Standard figure, marked as such ([CTK] (Standard figure))."""
    ironwood = [SliceSpec(generation="tpu7x", topology="2x2x1")]
    assert refusal(location="us-central1", mode="autopilot", slices=ironwood).endswith(
        "set cluster.minVersion to 1.34.3-gke.1318000 or later (source: [CTK] (Standard figure))"
    )


# --- capacity (cluster/capacity.py): GKE's documented combinations and the autoscaling each shape allows --


def limits(**slice_fields) -> tuple[int | None, int | None, int | None]:
    pool = one_pool(**slice_fields)
    return pool.node_count, pool.autoscaling_min, pool.autoscaling_max


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"topology": "4x4"}, (4, None, None)),  # 16 chips on 4-chip VMs: the whole slice, fixed
        ({"topology": "4x4", "nodes": 4}, (4, None, None)),
        ({"topology": "4x4", "autoscaling": {}}, (None, 0, 4)),  # a multi-host pool scales 0 <-> whole slice
        ({"topology": "4x4", "autoscaling": {"minNodes": 4}}, (None, 4, 4)),
        ({"topology": "4x4", "autoscaling": {"minNodes": 0, "maxNodes": 4}}, (None, 0, 4)),
        ({"topology": "4x4", "flexStart": True}, (None, 0, 4)),  # DWS: --num-nodes=0, autoscaling from 0
        ({"topology": "4x4", "queuedProvisioning": True}, (None, 0, 4)),
        ({"topology": "2x4"}, (1, None, None)),  # single host: one VM
        ({"topology": "2x4", "nodes": 3}, (3, None, None)),
        ({"topology": "2x4", "nodes": 0}, (0, None, None)),  # a pool kept empty
        ({"topology": "2x4", "autoscaling": {}}, (None, 0, 1)),
        ({"topology": "2x4", "nodes": 3, "autoscaling": {}}, (None, 0, 3)),
        ({"topology": "2x4", "autoscaling": {"minNodes": 2, "maxNodes": 5}}, (None, 2, 5)),
        ({"topology": "2x4", "autoscaling": {"minNodes": 2, "maxNodes": 2}}, (None, 2, 2)),
        ({"topology": "2x4", "flexStart": True}, (None, 0, 1)),
        ({"topology": "2x4", "flexStart": True, "nodes": 2}, (None, 0, 2)),
        ({"topology": "2x4", "queuedProvisioning": True, "autoscaling": {"maxNodes": 3}}, (None, 0, 3)),
    ],
)
def test_node_count_and_autoscaling_limits_gke_accepts(fields, expected):
    assert limits(generation="v6e", **fields) == expected


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (
            {"topology": "4x4", "nodes": 3},
            "cluster.slices[0].nodes: 3 does not match the 4x4 slice on ct6e-standard-4t; a multi-host pool always "
            "has 4 nodes; add slices with count instead",
        ),
        ({"topology": "4x4", "autoscaling": {"minNodes": 2}}, "cluster.slices[0].autoscaling: '2..4' is not a whole"),
        ({"topology": "4x4", "autoscaling": {"maxNodes": 8}}, "cluster.slices[0].autoscaling: '0..8' is not a whole"),
        ({"topology": "4x4", "autoscaling": {"maxNodes": 3}}, "'0..3' is not a whole-slice range"),
        (
            {"topology": "4x4", "flexStart": True, "autoscaling": {"minNodes": 4}},
            "cluster.slices[0].autoscaling.minNodes: 4 must be 0 with flex-start or queued provisioning",
        ),
        (
            {"topology": "2x4", "autoscaling": {"minNodes": 3, "maxNodes": 2}},
            "cluster.slices[0].autoscaling: '3..2' has minNodes above maxNodes; set minNodes <= maxNodes",
        ),
        ({"topology": "2x4", "autoscaling": {"minNodes": 2}}, "'2..1' has minNodes above maxNodes"),
        (
            {"topology": "2x4", "flexStart": True, "autoscaling": {"minNodes": 1, "maxNodes": 2}},
            "cluster.slices[0].autoscaling.minNodes: 1 must be 0 with flex-start or queued provisioning",
        ),
        ({"topology": "2x4", "maxRunDuration": "forever"}, "maxRunDuration: 'forever' is not a duration GKE accepts"),
        ({"topology": "2x4", "maxRunDuration": "0s"}, "maxRunDuration: '0s' is not a duration GKE accepts"),
        ({"topology": "2x4", "reservation": "Res_1"}, "cluster.slices[0].reservation: 'Res_1' is not a reservation"),
        (
            {"topology": "2x4", "flexStart": True, "spot": True},
            "cluster.slices[0].flexStart: True cannot be combined with spot",
        ),
        (
            {"topology": "2x4", "flexStart": True, "reservation": "r1"},
            "cluster.slices[0].flexStart: True cannot use a reservation",
        ),
        (
            {"topology": "2x4", "queuedProvisioning": True, "reservation": "r1"},
            "cluster.slices[0].queuedProvisioning: True cannot use a reservation (affinity must be NO_RESERVATION)",
        ),
        (
            {"topology": "2x4", "queuedProvisioning": True, "spot": True},
            "cluster.slices[0].queuedProvisioning: True cannot be combined with spot",
        ),
        ({"topology": "2x4", "spot": True, "reservation": "r1"}, "cluster.slices[0].spot: True cannot consume"),
        (
            {"topology": "2x4", "queuedProvisioning": True, "flexStart": False},
            "cluster.slices[0].flexStart: False contradicts queuedProvisioning",
        ),
        (
            {"topology": "2x4", "flexStart": True, "maxRunDuration": "604801s"},
            "maxRunDuration: '604801s' is longer than the 7 days a flex-start VM may run; use at most 604800s",
        ),
        (
            {"topology": "2x4", "queuedProvisioning": True, "maxRunDuration": "604801s"},
            "maxRunDuration: '604801s' is longer than the 7 days",
        ),
    ],
)
def test_capacity_combinations_gke_refuses(fields, problem):
    assert problem in refusal(slices=[SliceSpec(generation="v6e", **fields)])


def test_capacity_combinations_gke_accepts():
    """7 days = 604,800 s is the flex-start limit itself; without flex-start GKE sets no such limit."""
    assert one_pool(generation="v6e", topology="2x4", flexStart=True, maxRunDuration="604800s").max_run_duration
    assert one_pool(generation="v6e", topology="2x4", queuedProvisioning=True, flexStart=True).queued_provisioning
    assert one_pool(generation="v6e", topology="2x4", spot=True, maxRunDuration="1209600s").spot
    assert one_pool(generation="v6e", topology="2x4", reservation="r1").reservation == "r1"


def test_queued_provisioning_only_on_the_generations_gke_builds_it_for():
    """v6e and tpu7x (catalogue QUEUED_TPU_GENERATIONS; GKE refused others, xpk#900)."""
    problem = refusal(
        location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="2x4", queuedProvisioning=True)]
    )
    assert problem.startswith("cluster.slices[0].queuedProvisioning: True is not known to work for TPU v5e")
    assert problem.endswith("use flexStart alone, or queued provisioning on TPU v6e or tpu7x")
    ironwood = SliceSpec(generation="tpu7x", topology="2x2x1", queuedProvisioning=True)
    assert (
        plan_cluster(spec(location="us-central1-c", min_version="1.35", slices=[ironwood])).pools[0].queued_provisioning
    )


def test_two_identical_single_host_slices_are_one_pool_of_two_nodes():
    (pool,) = plan_cluster(
        spec(location="us-east5-a", slices=[SliceSpec(generation="v5e", topology="2x2", count=2)])
    ).pools
    assert (pool.name, pool.node_count) == ("tpu-v5e-2x2", 2)


def test_a_zonal_cluster_names_its_own_region_and_may_span_zones_of_it():
    assert refusal(location="us-central1-a", mode="autopilot").endswith(
        "Autopilot clusters are regional; use us-central1"
    )
    spanning = plan_cluster(spec(location="us-central1-b", node_locations=["us-central1-b", "us-central1-c"]))
    assert (spanning.regional, spanning.node_locations) == (False, ("us-central1-b", "us-central1-c"))


DEFAULT_COMPUTE = "123456789012-compute@developer.gserviceaccount.com"


def test_the_default_compute_account_is_refused_for_new_nodes_with_the_real_reason():
    """GKE's hardening guide: nodes run as a least-privilege account, not the Compute Engine default one
    (https://cloud.google.com/kubernetes-engine/docs/how-to/hardening-your-cluster#use_least_privilege_sa)."""
    with pytest.raises(UserError) as refused:
        plan_cluster(spec(node_service_account=DEFAULT_COMPUTE))
    message = str(refused.value)
    assert message.startswith(f"cluster.nodeServiceAccount: '{DEFAULT_COMPUTE}' is the Compute Engine default account")
    assert "project Editor" in message and "leave it unset" in message and "\n" not in message
    assert "not a service account email" not in message


def test_the_default_compute_account_states_what_an_existing_clusters_nodes_run_as():
    existing = {"name": "prod", "location": "us-central1-b", "createPools": True}
    chosen = plan_cluster(spec(existing=existing, node_service_account=DEFAULT_COMPUTE))
    assert chosen.spec.node_service_account == DEFAULT_COMPUTE


def test_a_least_privilege_account_is_accepted():
    account = "tpu-nodes@my-proj.iam.gserviceaccount.com"
    assert plan_cluster(spec(node_service_account=account)).spec.node_service_account == account


# -- the key a refusal names is the one the user wrote -------------------------------------------------------

V6E_2X4 = SliceSpec(generation="v6e", topology="2x4")
NO_V6E = "does not offer TPU v6e (source: TPU regions and zones"
"""us-central1-a offers no v6e (catalog/locations.py; us-central1-b does)."""


@pytest.mark.parametrize(
    ("fields", "key"),
    [
        # the slice names its zone: that zone is the key
        ({"location": "us-central1", "slices": [V6E_2X4.model_copy(update={"zone": "us-central1-a"})]}, "slices"),
        # a zonal cluster's pools are in its location
        ({"location": "us-central1-a", "slices": [V6E_2X4]}, "location"),
        # a regional cluster's pools are in its one node location
        ({"location": "us-central1", "node_locations": ["us-central1-a"], "slices": [V6E_2X4]}, "nodeLocations"),
    ],
)
def test_a_zone_without_the_generation_is_refused_under_the_key_that_chose_it(fields, key):
    expected = {
        "slices": f"cluster.slices[0].zone: 'us-central1-a' {NO_V6E}",
        "location": f"cluster.location: 'us-central1-a' {NO_V6E}",
        "nodeLocations": f"cluster.nodeLocations[0]: 'us-central1-a' {NO_V6E}",
    }[key]
    assert refusal(**fields).startswith(expected)


def test_an_autopilot_region_without_the_generation_is_refused_under_the_location():
    """Autopilot places TPU nodes itself, anywhere in the region: the region is what the user chose."""
    assert refusal(location="europe-west1", mode="autopilot", slices=[V6E_2X4]).startswith(
        "cluster.location: 'europe-west1' has no zone that offers TPU v6e (source: TPU regions and zones"
    )


def test_an_uncatalogued_slice_zone_is_recorded_as_a_zone_and_as_a_tpu_zone():
    """allowUncatalogued lets a zone newer than the catalogue through; the plan records both what the catalogue
    does not know (the zone itself, and that it offers the generation), under the slice's key."""
    decided = plan_cluster(
        spec(
            location="us-central1",
            slices=[V6E_2X4.model_copy(update={"zone": "us-central1-x"})],
            allow_uncatalogued=True,
        )
    )
    assert [line.split(" (")[0] for line in decided.beyond_catalogue] == [
        "cluster.slices[0].zone: 'us-central1-x' is not a zone of us-central1",
        "cluster.slices[0].zone: 'us-central1-x' does not offer TPU v6e in the catalogue",
    ]


def test_the_system_pools_machine_type_is_checked_only_where_the_stack_creates_that_pool():
    """A new Standard cluster gets the system pool (refused: a type the E2 series does not have); an existing
    cluster keeps its own nodes, so whatever systemPool says is not checked (no pool of ours uses it)."""
    assert refusal(system_pool={"machine_type": "e2-standard-99"}).startswith(
        "cluster.systemPool.machineType: 'e2-standard-99' is not a machine type of the E2 series"
    )
    existing = {"name": "prod", "location": "us-central1-b"}
    assert plan_cluster(spec(existing=existing, system_pool={"machine_type": "e2-standard-99"})).pools == ()


def test_an_existing_clusters_project_is_refused_under_the_key_that_gave_it():
    """`cluster.existing.project` when the existing cluster names one; else the stack's `cluster.project`."""
    other = {"name": "prod", "location": "us-central1-b", "project": "s3ns:other"}
    assert refusal(existing=other).startswith("cluster.existing.project: 's3ns:other' is a project id of universe s3ns")
    with pytest.raises(UserError) as caught:
        plan_cluster(
            ClusterSpec(
                project="s3ns:mine", location="us-central1-b", existing={"name": "p", "location": "us-central1-b"}
            )
        )
    assert str(caught.value).startswith("cluster.project: 's3ns:mine' is a project id of universe s3ns")

"""Pure decisions of a cluster: pools from slices, and the helpers workloads plan their cluster with."""

import pytest

from tpu_stacks.cluster.plan import plan_cluster, plan_workload_cluster, refuse_given_slices, require_addons
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

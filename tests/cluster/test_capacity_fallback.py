"""`capacity` lists: one kind is today's node pool of that kind; several kinds are a ComputeClass GKE
falls back across. Every combination GKE documents as unsupported is refused in one line naming the key."""

import pytest

from tpu_stacks.cluster.capacity import Capacity, parse_capacity
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError

V6E = {"generation": "v6e", "topology": "2x4", "name": "serve"}
FALLBACK = ["spot", "onDemand", "flexStart"]


def plan(*slices, mode="standard", min_version="1.33.3-gke.1136000", location="us-east5-b"):
    spec = {"project": "p", "location": location, "mode": mode, "slices": list(slices)}
    if min_version:
        spec["minVersion"] = min_version
    return plan_cluster(ClusterSpec.model_validate(spec))


def refusal(*slices, **kwargs) -> str:
    with pytest.raises(UserError) as caught:
        plan(*slices, **kwargs)
    return str(caught.value)


# -- the list itself ---------------------------------------------------------------------------------


def test_kinds_keep_the_users_order():
    assert parse_capacity("k", [{"reservation": "r1"}, "spot", "onDemand", "flexStart"]) == (
        Capacity(kind="reservation", reservation="r1"),
        Capacity(kind="spot"),
        Capacity(kind="onDemand"),
        Capacity(kind="flexStart"),
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["spto"], "k[0]: 'spto' is not a capacity kind; did you mean 'spot'?"),
        (["on-demand"], "k[0]: 'on-demand' is not a capacity kind; did you mean 'onDemand'?"),
        (["reservation"], "k[0]: 'reservation' is not a capacity kind; write {reservation: NAME}"),
        (["spot", "spot"], "k[1]: 'spot' is listed twice; list each kind once, in the order to try"),
        ([], "k: [] is empty; list at least one of spot, onDemand, flexStart, {reservation: NAME}"),
        ([{"reservation": "Bad_Name"}], "k[0].reservation: 'Bad_Name' is not a reservation name"),
    ],
)
def test_a_wrong_entry_is_one_line_naming_it(raw, expected):
    with pytest.raises(UserError) as caught:
        parse_capacity("k", raw)
    assert str(caught.value).startswith(expected)


def test_a_shared_reservation_or_other_affinity_is_not_offered():
    """TPU rules take only a Specific reservation ([ACP]); another project's reservation is not offered."""
    with pytest.raises(UserError) as caught:
        parse_capacity("k", [{"reservation": "r", "project": "other"}])
    assert str(caught.value).startswith("k[0].project: 'other' is not a setting of a reservation entry")


# -- one kind: the node pool of today ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "spot", "reservation", "flex"),
    [("spot", True, None, False), ("onDemand", False, None, False), ("flexStart", False, None, True)],
)
def test_one_plain_kind_is_a_node_pool_of_that_kind(kind, spot, reservation, flex):
    (pool,) = plan({**V6E, "capacity": [kind]}, min_version=None, location="us-central1-b").pools
    assert (pool.spot, pool.reservation, pool.flex_start, pool.compute_class) == (spot, reservation, flex, None)
    assert pool.node_count == (None if flex else 1)  # flex-start pools scale from zero, as before


def test_one_reservation_is_a_pool_consuming_it():
    (pool,) = plan({**V6E, "capacity": [{"reservation": "tpu-res"}]}, min_version=None).pools
    assert pool.reservation == "tpu-res" and pool.reservation_affinity == "SPECIFIC_RESERVATION"


def test_capacity_and_the_old_flags_together_are_refused():
    assert refusal({**V6E, "spot": True, "capacity": ["onDemand"]}).startswith(
        "cluster.slices[0].spot: True cannot be combined with capacity; list it in capacity instead"
    )


# -- several kinds: a ComputeClass -------------------------------------------------------------------


@pytest.mark.parametrize("kinds", [FALLBACK, FALLBACK[:2]], ids=["three", "two"])
def test_several_kinds_make_a_compute_class_and_no_fixed_pool(kinds):
    """Two kinds are already several: the ComputeClass, not a node count, decides the nodes."""
    (pool,) = plan({**V6E, "capacity": kinds}).pools
    assert pool.compute_class == "serve"
    assert [kind.kind for kind in pool.capacity] == kinds
    assert (pool.node_count, pool.autoscaling_min, pool.autoscaling_max, pool.spot) == (None, None, None, False)
    assert pool.node_selector() == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x4",
        "cloud.google.com/compute-class": "serve",
    }


def test_numbered_multi_host_slices_share_one_class():
    plan_ = plan(
        {"generation": "v5e", "topology": "4x8", "count": 2, "name": "tpu{n}", "capacity": ["spot", "onDemand"]}
    )
    assert [p.name for p in plan_.pools] == ["tpu1", "tpu2"]
    assert {p.compute_class for p in plan_.pools} == {"tpu"} and len(plan_.compute_classes) == 1


def test_min_version_is_required_and_names_the_floor_and_source():
    assert refusal({**V6E, "capacity": FALLBACK}, min_version=None) == (
        "cluster.minVersion is required for a capacity fallback (spot -> onDemand -> flexStart), which needs "
        "GKE 1.33.3-gke.1136000; set cluster.minVersion to 1.33.3-gke.1136000 or later (source: [D-GKE-NAP])"
    )


def test_standard_below_auto_creation_without_nap_is_refused():
    message = refusal({**V6E, "capacity": ["spot", "onDemand"]}, min_version="1.33.2-gke.1000000")
    assert message.startswith("cluster.minVersion: '1.33.2-gke.1000000' is older than a ComputeClass")
    assert "use 1.33.3-gke.1136000 or later" in message


def test_autopilot_needs_no_auto_creation_but_flex_start_needs_its_version():
    plan({**V6E, "capacity": ["spot", "onDemand"]}, mode="autopilot", location="us-east5", min_version="1.32.0")
    message = refusal(
        {**V6E, "zone": "us-east5-b", "capacity": FALLBACK}, mode="autopilot", location="us-east5", min_version="1.32.9"
    )
    assert "use 1.33.0-gke.1712000 or later (source: [D-FLEX])" in message


def test_below_custom_compute_classes_is_refused_in_autopilot_too():
    message = refusal(
        {**V6E, "capacity": ["spot", "onDemand"]}, mode="autopilot", location="us-east5", min_version="1.30.2"
    )
    assert "use 1.30.3-gke.1451000 or later (source: [D-CCC])" in message


def test_flex_start_on_v4_is_refused():
    v4 = {"generation": "v4", "topology": "2x2x1", "capacity": ["spot", "flexStart"]}
    assert refusal(v4, location="us-central2-b").startswith(
        "cluster.slices[0].capacity[1]: 'flexStart' is not offered for TPU v4"
    )


def test_flex_start_longer_than_seven_days_is_refused():
    message = refusal({**V6E, "capacity": FALLBACK, "maxRunDuration": "700000s"})
    assert message.startswith("cluster.slices[0].maxRunDuration: '700000s' is longer than the 7 days")
    # 7 days = 604,800 s is GKE's own limit (catalogue FLEX_START_MAX_RUN_SECONDS): exactly that is accepted
    assert plan({**V6E, "capacity": FALLBACK, "maxRunDuration": "604800s"}).compute_classes
    assert "604801s" in refusal({**V6E, "capacity": FALLBACK, "maxRunDuration": "604801s"})


def test_one_kind_in_a_list_is_a_node_pool_not_a_class():
    from tpu_stacks.cluster.capacity import is_fallback

    assert (is_fallback(None), is_fallback(["spot"]), is_fallback(["spot", "onDemand"])) == (False, False, True)
    (pool,) = plan({**V6E, "capacity": ["spot"]}).pools
    assert (pool.spot, pool.compute_class) == (True, None)


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"nodes": 2}, "nodes"),
        ({"autoscaling": {"maxNodes": 2}}, "autoscaling"),
        ({"threadsPerCore": 1}, "threadsPerCore"),
    ],
)
def test_pool_sizing_settings_are_refused_with_a_fallback(extra, key):
    assert refusal({**V6E, "capacity": FALLBACK, **extra}).startswith(f"cluster.slices[0].{key}:")


def test_queued_provisioning_cannot_fall_back():
    assert refusal({**V6E, "capacity": FALLBACK, "queuedProvisioning": True}).startswith(
        "cluster.slices[0].queuedProvisioning: True cannot be combined with capacity"
    )


def test_two_slices_cannot_share_one_compute_class():
    """Same name, different shapes: one class would describe the first slice's TPUs only."""
    big = {"generation": "v6e", "topology": "4x4", "count": 2, "name": "x", "capacity": ["spot", "onDemand"]}
    small = {"generation": "v6e", "topology": "2x4", "name": "x", "capacity": ["spot", "onDemand"]}
    assert refusal(big, small) == (
        "cluster.slices[1].name: 'x' names the ComputeClass of cluster.slices[0] too; "
        "give each slice with a capacity list a distinct name"
    )


def test_a_flex_start_pool_has_the_limits_of_a_flex_start_priority():
    v4 = {"generation": "v4", "topology": "2x2x1", "flexStart": True}
    assert refusal(v4, location="us-central2-b").startswith(
        "cluster.slices[0].flexStart: True is not offered for TPU v4"
    )
    one_kind = {**V6E, "capacity": ["flexStart"]}
    assert refusal(one_kind, min_version="1.32.0").startswith(
        "cluster.minVersion: '1.32.0' is older than flex-start TPU node pools need; use 1.33.0-gke.1712000"
    )
    (pool,) = plan(one_kind, min_version="1.33.0-gke.1712000").pools
    assert pool.flex_start


@pytest.mark.parametrize(
    "one_slice",
    [
        {**V6E, "capacity": FALLBACK},  # a ComputeClass fallback reads the version first
        {**V6E, "capacity": ["flexStart"]},  # a flex-start pool of one kind
        {**V6E, "flexStart": True},
    ],
)
@pytest.mark.parametrize("version", ["1.33.x", "v1.33", "1.33.3-gke", "", "latest"])
def test_a_malformed_min_version_is_one_line_under_its_key(one_slice, version):
    """Whichever check meets `cluster.minVersion` first (fallback, flex-start or the generation floor), a
    version that is not one is refused in one line naming the key as written, never a traceback."""
    message = refusal(one_slice, min_version=version or " ")
    assert message.startswith("cluster.minVersion: ") and "is not a GKE version" in message
    assert "\n" not in message


def test_the_plan_keeps_the_exact_floor_for_up_to_resolve():
    """The plan hands `up` the floor as written (cluster/versions.py turns it into a version GKE offers)."""
    assert plan({**V6E, "capacity": FALLBACK}).version_floor == "1.33.3-gke.1136000"
    assert plan({**V6E, "capacity": FALLBACK}, min_version="1.34.1").version_floor == "1.34.1"
    assert plan({**V6E, "capacity": ["spot"]}, min_version=None).version_floor is None

"""The version a new cluster is created at (cluster/versions.py): a pure choice from what GKE offers, and
the component that asks GKE (`getEngineVersions`) and sends the choice once (ignoreChanges)."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest

from tests.cluster.test_component import CLUSTER, build
from tests.mocks import capture
from tests.shipped import shipped
from tpu_stacks.catalog.gke_versions import gke_version
from tpu_stacks.cluster.component import TpuCluster, cluster_ignore_changes
from tpu_stacks.cluster.plan import plan_cluster
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.cluster.versions import OfferedVersions, create_version
from tpu_stacks.errors import UserError
from tpu_stacks_preview.mocks import OFFERED_CHANNELS

ROOT = Path(__file__).resolve().parents[2]
ENGINE_VERSIONS = "gcp:container/getEngineVersions:getEngineVersions"
FLOOR = "1.33.3-gke.1136000"


def offer(default: str | None, latest: str | None, *valid: str, channel: str = "RAPID") -> OfferedVersions:
    return OfferedVersions(
        location="us-east5-b",
        valid_master=valid,
        channel_defaults={channel: default} if default is not None else {},
        channel_latest={channel: latest} if latest is not None else {},
    )


def test_the_channels_default_when_it_meets_the_floor():
    offered = offer("1.34.1-gke.3971000", "1.35.0-gke.2398000", "1.35.0-gke.2398000", "1.34.1-gke.3971000", FLOOR)
    assert create_version(FLOOR, "RAPID", offered) == "1.34.1-gke.3971000"
    assert create_version(FLOOR, "RAPID", offer(FLOOR, FLOOR, FLOOR)) == FLOOR  # the floor itself meets it


def test_below_the_floor_the_channels_newest_when_it_meets_it():
    """The 1.33 alias would have resolved to 1.33.2-gke.1000000 here: below the floor, fixed by choosing
    the channel's newest, which the channel certainly offers (a version only the location lists may not be
    one a cluster enrolled in the channel can be created at)."""
    offered = offer("1.33.2-gke.1000000", "1.34.1-gke.3971000", "1.34.1-gke.3971000", "1.33.4-gke.1350000")
    assert create_version(FLOOR, "RAPID", offered) == "1.34.1-gke.3971000"
    # Numbers compare as numbers: 1.33.10 is above the floor's 1.33.3, gke.1136001 above gke.1136000.
    assert create_version(FLOOR, "RAPID", offer("1.33.2-gke.1", "1.33.10-gke.900")) == "1.33.10-gke.900"
    assert create_version(FLOOR, "RAPID", offer("1.33.3-gke.999999", "1.33.3-gke.1136001")) == "1.33.3-gke.1136001"


def test_a_version_only_the_location_lists_is_never_chosen():
    offered = offer("1.32.9-gke.1010000", "1.33.5-gke.1308000", "1.35.0-gke.2398000", "1.34.1-gke.3971000")
    assert create_version(FLOOR, "RAPID", offered) == "1.33.5-gke.1308000"


def test_the_channel_named_is_the_one_read():
    offered = OfferedVersions(
        location="us-central1",
        channel_defaults={"RAPID": "1.35.0-gke.2398000", "STABLE": "1.32.9-gke.1010000"},
        channel_latest={"RAPID": "1.35.0-gke.2398000", "STABLE": "1.33.6-gke.1180000"},
        valid_master=("1.35.0-gke.2398000", "1.33.6-gke.1180000", "1.33.5-gke.1308000", "1.32.9-gke.1010000"),
    )
    assert create_version(FLOOR, "RAPID", offered) == "1.35.0-gke.2398000"
    assert create_version(FLOOR, "STABLE", offered) == "1.33.6-gke.1180000"


@pytest.mark.parametrize(
    "offered",
    [
        offer("1.32.9-gke.1010000", "1.33.2-gke.1000000", "1.33.2-gke.1000000", "1.32.9-gke.1010000"),
        offer(None, None),
        offer("1.32.9-gke.1010000", "1.32.9-gke.1010000", "1.35.0-gke.2398000"),  # listed, not in the channel
    ],
    ids=["all-below", "nothing-offered", "only-beyond-the-channel"],
)
def test_nothing_reaching_the_floor_is_one_line_naming_the_key_the_floor_and_the_offer(offered):
    with pytest.raises(UserError) as raised:
        create_version(FLOOR, "RAPID", offered)
    message = str(raised.value)
    assert message.startswith(f"cluster.minVersion: {FLOOR!r}") or message.startswith(f"cluster.minVersion: {FLOOR}")
    assert "us-east5-b" in message and "RAPID" in message and "\n" not in message
    default = offered.channel_defaults.get("RAPID")
    assert (default in message) if default else ("none" in message or "no versions" in message)


@pytest.mark.parametrize("odd", ["", "latest", "1.33.x", "-", "v1.34.1-gke.3971000", "1.34.1-gke"])
def test_odd_version_strings_in_the_offer_are_skipped_not_chosen(odd):
    assert create_version(FLOOR, "RAPID", offer(odd, "1.33.4-gke.1350000")) == "1.33.4-gke.1350000"
    assert create_version(FLOOR, "RAPID", offer("1.33.4-gke.1350000", odd)) == "1.33.4-gke.1350000"
    with pytest.raises(UserError):
        create_version(FLOOR, "RAPID", offer(odd, odd, odd))


def test_whitespace_around_an_offered_version_is_not_sent():
    assert create_version(FLOOR, "RAPID", offer(" 1.34.1-gke.3971000 ", None)) == "1.34.1-gke.3971000"


def test_a_malformed_floor_is_refused_under_its_key():
    with pytest.raises(UserError) as raised:
        create_version("1.33.x", "RAPID", offer("1.34.1-gke.3971000", None))
    assert str(raised.value).startswith("cluster.minVersion: ")


# The component, under the offline planner's mocks (tpu_stacks_preview.mocks.OFFERED_*).

IRONWOOD = {
    "location": "us-central1-c",
    "min_version": "1.34.3-gke.1318000",
    "slices": [{"generation": "tpu7x", "topology": "2x2x2", "name": "ironwood"}],
}


def test_with_a_floor_the_component_asks_gke_for_the_locations_versions_with_no_prefix():
    mocks = build(IRONWOOD)
    (args,) = mocks.calls_of(ENGINE_VERSIONS)
    assert args.get("location") == "us-central1-c" and args.get("project") == "proj"
    assert not args.get("versionPrefix")  # a newer minor meets the floor too
    default, _ = OFFERED_CHANNELS["REGULAR"]
    assert gke_version(default) < gke_version(
        "1.34.3"
    )  # the mocks' REGULAR default is below this floor: the second rule decides
    # ... so REGULAR's newest, which the channel certainly offers, is sent.
    assert mocks.of_type(CLUSTER)[0].inputs["minMasterVersion"] == OFFERED_CHANNELS["REGULAR"][1][0]


def test_without_a_floor_nothing_is_asked_and_nothing_sent():
    mocks = build({"location": "us-central1-a", "slices": [{"generation": "v5e", "topology": "2x4"}]})
    assert mocks.calls_of(ENGINE_VERSIONS) == []
    assert "minMasterVersion" not in mocks.of_type(CLUSTER)[0].inputs


def test_an_existing_cluster_asks_nothing():
    mocks = build(
        {"location": "us-central1-c", "min_version": FLOOR, "existing": {"name": "old", "location": "us-central1-c"}}
    )
    assert mocks.calls_of(ENGINE_VERSIONS) == [] and mocks.of_type(CLUSTER) == []


def test_the_version_is_ignored_after_create_only_when_one_is_sent():
    floor = plan_cluster(ClusterSpec(project="p", location="us-central1-a", min_version=FLOOR))
    none = plan_cluster(ClusterSpec(project="p", location="us-central1-a"))
    autopilot = plan_cluster(ClusterSpec(project="p", location="us-central1", mode="autopilot", min_version=FLOOR))
    assert cluster_ignore_changes(floor) == ["nodeConfig", "minMasterVersion"]
    assert cluster_ignore_changes(none) == ["nodeConfig"]
    assert cluster_ignore_changes(autopilot) == ["minMasterVersion"]


def test_a_floor_the_location_does_not_reach_fails_the_run_in_one_line():
    """1.35.2 is above everything the mocks offer: the invoke's answer refuses it, as on a real `up`."""

    def declare() -> TpuCluster:
        return TpuCluster("c", {"project": "proj", "location": "us-central1-a", "min_version": "1.35.2-gke.100"})

    with pytest.raises(pulumi.RunError) as raised:
        capture(declare)
    message = str(raised.value)
    assert message.startswith("cluster.minVersion: ") and "us-central1-a" in message and "\n" not in message
    assert "REGULAR" in message and "1.35.2-gke.100" in message and message.endswith("location that offers it")


def test_the_plan_document_shows_the_chosen_version_and_the_ignore():
    """The shipped vllm-fallback stack through the offline engine. The version query waits for the Kubernetes
    Engine API the stack enables (a fresh project refuses getServerConfig until then), so a preview cannot
    know the version; the up run sees RAPID's default in the mocks' offer, which meets the 1.33.3 floor."""
    preview = shipped("vllm-fallback", preview=True)
    assert preview.error is None, preview.error
    (planned,) = [r for r in preview.sorted_resources() if r.type == CLUSTER]
    assert "minMasterVersion" in planned.options_document()["ignoreChanges"]
    assert planned.inputs.get("minMasterVersion") != OFFERED_CHANNELS["RAPID"][0]  # unknown until the API is on
    capture_ = shipped("vllm-fallback", preview=False)
    assert capture_.error is None, capture_.error
    (cluster,) = [r for r in capture_.sorted_resources() if r.type == CLUSTER]
    assert cluster.inputs["minMasterVersion"] == OFFERED_CHANNELS["RAPID"][0]
    (invoke,) = [i for i in capture_.invokes if i.token == ENGINE_VERSIONS]
    assert invoke.args.get("location") == "us-east5-b" and invoke.args.get("project") == "my-tpu-project"


def test_a_build_without_a_patch_is_not_a_gke_version():
    """GKE writes `1.33.3-gke.1136000` or `1.33`; `1.33-gke.5` is neither, and was read as 1.33.0-gke.5."""
    with pytest.raises(UserError):
        gke_version("1.33-gke.5")
    assert gke_version("1.33") < gke_version("1.33.0-gke.1")


def test_the_offline_offer_reaches_every_floor_the_catalogue_names_in_every_channel():
    """Otherwise `tpu-stacks plan` would refuse, as if GKE did, a floor a real channel serves."""
    from tpu_stacks.catalog import capacity
    from tpu_stacks.catalog.tpu import GENERATIONS

    floors = {m.version for g in GENERATIONS for m in (g.min_gke_standard, g.min_gke_autopilot)}
    floors |= {v.version for v in vars(capacity).values() if type(v).__name__ == "MinimumVersion"}
    assert "1.34.3-gke.1318000" in floors  # tpu7x's, the highest today
    for channel, (default, valid) in OFFERED_CHANNELS.items():
        offered = OfferedVersions(
            location="us-central1-c",
            valid_master=valid,
            channel_defaults={channel: default},
            channel_latest={channel: valid[0]},
        )
        for floor in floors:
            assert not gke_version(create_version(floor, channel, offered)) < gke_version(floor), (channel, floor)

"""tpu-zone-offers-generation and tpu-zone-catalogued: raw pulumi-gcp node pools (no annotations, no
project components) in zones that do or do not offer their TPU generation."""

import pulumi_gcp as gcp
import pytest

from tests.policies.harness import capture, of, raw, run
from tpu_stacks.cluster.component import TpuCluster

POLICY, ADVISORY = "tpu-zone-offers-generation", "tpu-zone-catalogued"


def pool(machine, location, node_locations=None, name="tpu"):
    return gcp.container.NodePool(
        name,
        cluster="c",
        location=location,
        node_locations=node_locations,
        node_count=1,
        node_config=gcp.container.NodePoolNodeConfigArgs(machine_type=machine),
    )


def verdicts(build, config=None):
    found = run(capture(build), config)
    return [d.message for d in of(found, POLICY)], [d.message for d in of(found, ADVISORY)]


# Expected zones typed from Google's "TPU regions and zones" page (docs.cloud.google.com/tpu/docs/regions-zones)
# and the single-tenant list of its German edition, not read from the catalogue.
@pytest.mark.parametrize(
    "machine,zone",
    [
        ("ct6e-standard-4t", "us-central1-b"),  # v6e
        ("ct6e-standard-8t", "europe-west4-a"),
        ("ct5lp-hightpu-8t", "us-west4-a"),  # v5e (the JetStream tutorial's zone)
        ("ct5lp-hightpu-4t", "us-central1-a"),
        ("ct5p-hightpu-4t", "us-east5-a"),  # v5p
        ("ct4p-hightpu-4t", "us-central2-b"),  # v4
        ("tpu7x-standard-4t", "us-central1-c"),  # TPU7x
        ("ct5lp-hightpu-4t", "us-east5-b"),  # v5e, single-tenant
    ],
)
def test_a_pool_in_a_zone_that_offers_its_generation_passes(machine, zone):
    assert verdicts(lambda: pool(machine, zone)) == ([], [])


@pytest.mark.parametrize(
    "machine,zone,generation,nearest",
    [
        ("ct6e-standard-4t", "us-west4-a", "v6e", "us-central1-b"),
        ("ct5lp-hightpu-4t", "us-central1-b", "v5e", "us-central1-a"),  # same region first
        ("ct5p-hightpu-4t", "europe-west4-a", "v5p", "us-central1-a"),
        ("ct4p-hightpu-4t", "us-central1-a", "v4", "us-central2-b"),
        ("tpu7x-standard-4t", "us-central1-b", "tpu7x", "us-central1-ai1a"),
    ],
)
def test_a_pool_in_a_zone_without_its_generation_is_refused(machine, zone, generation, nearest):
    (problem,), notes = verdicts(lambda: pool(machine, zone))
    assert f"{zone} does not offer TPU {generation}" in problem
    assert f"; use {nearest}" in problem  # nearest first
    assert "TPU regions and zones <https://docs.cloud.google.com/tpu/docs/regions-zones>" in problem
    assert "allowedZones" in problem and notes == []


def test_the_violation_is_mandatory_by_default_and_configurable():
    resources = capture(lambda: pool("ct6e-standard-4t", "us-west4-a"))
    assert [d.level for d in of(run(resources), POLICY)] == ["mandatory"]
    assert [d.level for d in of(run(resources, {POLICY: "advisory"}), POLICY)] == ["advisory"]
    assert of(run(resources, {POLICY: "disabled"}), POLICY) == []


def test_allowed_zones_accept_a_zone_newer_than_the_catalogue():
    config = {POLICY: {"enforcementLevel": "mandatory", "allowedZones": ["us-west4-a"]}}
    assert verdicts(lambda: pool("ct6e-standard-4t", "us-west4-a"), config) == ([], [])


def test_node_locations_win_over_a_regional_location():
    refused, _ = verdicts(lambda: pool("ct6e-standard-4t", "us-central1", ["us-central1-a"]))
    assert len(refused) == 1 and "us-central1-a does not offer TPU v6e" in refused[0]
    assert verdicts(lambda: pool("ct6e-standard-4t", "us-central1", ["us-central1-b"])) == ([], [])


def test_a_region_is_judged_by_whether_any_of_its_zones_offers_the_generation():
    assert verdicts(lambda: pool("ct6e-standard-4t", "us-central1")) == ([], [])
    (problem,), _ = verdicts(lambda: pool("ct6e-standard-4t", "europe-west1"))
    assert "europe-west1 has no zone that offers TPU v6e" in problem and "use europe-west4-a" in problem


def test_inline_pools_of_a_raw_cluster_are_judged_with_the_cluster_location():
    def build():
        gcp.container.Cluster(
            "raw",
            location="asia-east1-a",
            node_pools=[
                gcp.container.ClusterNodePoolArgs(
                    name="tpu",
                    node_count=1,
                    node_config=gcp.container.ClusterNodePoolNodeConfigArgs(machine_type="ct6e-standard-4t"),
                ),
                gcp.container.ClusterNodePoolArgs(
                    name="cpu",
                    node_count=1,
                    node_config=gcp.container.ClusterNodePoolNodeConfigArgs(machine_type="e2-standard-4"),
                ),
            ],
        )

    (problem,), _ = verdicts(build)
    assert problem.startswith("node pool tpu (ct6e-standard-4t, TPU v6e): asia-east1-a does not offer TPU v6e")


def test_cpu_pools_are_not_judged():
    assert verdicts(lambda: pool("e2-standard-4", "asia-east1-a")) == ([], [])


def test_an_unknown_zone_is_advisory_not_silent():
    refused, (note,) = verdicts(lambda: pool("ct6e-standard-4t", "us-central1-z"))
    assert refused == [] and "us-central1-z is not a zone of us-central1" in note
    refused, (note,) = verdicts(lambda: pool("ct6e-standard-4t", "mars-north1-a"))
    assert refused == [] and "mars-north1-a is in mars-north1, which is not a region of Google Cloud" in note


def test_a_location_unknown_at_preview_is_advisory():
    unknown = raw(
        "gcp:container/nodePool:NodePool",
        "tpu",
        {"location": "04da6b54-80e4-46f7-96ec-b56ff0331ba9", "nodeConfig": {"machineType": "ct6e-standard-4t"}},
    )
    found = run([unknown])
    assert of(found, POLICY) == []
    assert [d.level for d in of(found, ADVISORY)] == ["advisory"]
    assert "not known at preview" in of(found, ADVISORY)[0].message


def test_a_universe_without_a_tpu_zone_list_is_advisory():
    refused, (note,) = verdicts(lambda: pool("ct5lp-hightpu-4t", "u-france-east1-a"))
    assert refused == [] and "Cloud de Confiance by S3NS publishes no TPU zone list" in note
    assert "kubernetes-engine/docs/tpc-differences" in note


def test_pools_built_by_tpu_cluster_in_catalogued_zones_pass():
    def build():
        TpuCluster(
            "c", {"project": "my-proj", "location": "us-west4-a", "slices": [{"generation": "v5e", "topology": "2x4"}]}
        )

    assert verdicts(build) == ([], [])

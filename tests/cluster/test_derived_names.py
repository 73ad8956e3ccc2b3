"""Names derived from user names, under Pulumi's mocks: long cluster and pool names stay distinct and
within the APIs' limits (service account ids 30, resource policies 63), names that fit never change."""

from tests.cluster.test_component import CLUSTER, build, tpu_pools
from tpu_stacks.names import RESOURCE_NAME, SERVICE_ACCOUNT_ID

LONG = "averylongclustername-a"  # 22 characters: two clusters below share their first 24


def test_long_cluster_names_give_distinct_node_accounts_within_30_characters():
    first = build({"location": "us-central1-a", "name": f"{LONG}-team-one"}, name="one")
    second = build({"location": "us-central1-a", "name": f"{LONG}-team-two"}, name="two")
    ids = [m.of_type("gcp:serviceaccount/account:Account")[0].inputs["accountId"] for m in (first, second)]
    assert ids[0] != ids[1]
    assert all(SERVICE_ACCOUNT_ID.matches(i) and i.endswith("-nodes") for i in ids), ids
    (cluster,) = first.of_type(CLUSTER)
    assert cluster.inputs["nodeConfig"]["serviceAccount"] == f"{ids[0]}@proj.iam.gserviceaccount.com"


def test_tpu7x_workload_policy_name_fits_63_characters():
    cluster, pool = "c" + "x" * 39, "p" + "y" * 39  # the longest names GKE allows (40 each)
    mocks = build(
        {
            "location": "us-central1-c",
            "name": cluster,
            "min_version": "1.34.3-gke.1318000",
            "slices": [{"generation": "tpu7x", "topology": "2x2x2", "name": pool}],
        }
    )
    (policy,) = mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")
    name = policy.inputs["name"]
    assert RESOURCE_NAME.matches(name) and len(name) <= 63, name
    assert name.startswith(cluster[:20])
    (tpu_pool,) = tpu_pools(mocks)
    assert tpu_pool.inputs["placementPolicy"]["policyName"] == name


def test_short_names_are_unchanged():
    """Names that fit keep their old form: no URN or input of a shipped stack changes."""
    mocks = build(
        {
            "location": "us-central1-c",
            "name": "iron",
            "min_version": "1.34.3-gke.1318000",
            "slices": [{"generation": "tpu7x", "topology": "2x2x2", "name": "ironwood"}],
        }
    )
    assert mocks.of_type("gcp:serviceaccount/account:Account")[0].inputs["accountId"] == "iron-nodes"
    assert mocks.of_type("gcp:compute/resourcePolicy:ResourcePolicy")[0].inputs["name"] == "iron-ironwood"

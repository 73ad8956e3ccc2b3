"""`cluster.controlPlane` (authorized networks, private endpoint) and Dataplane V2 on the Cluster resource."""

import pytest

from tests.mocks import capture, refused
from tpu_stacks.cluster.component import TpuCluster

CLUSTER = "gcp:container/cluster:Cluster"
ZONE = {"location": "us-central1-a"}


def cluster_inputs(**args):
    mocks = capture(lambda: TpuCluster("c", {"project": "proj", **ZONE, **args}))
    return mocks.of_type(CLUSTER)[0].inputs


def test_by_default_the_endpoint_is_public_and_standard_clusters_enforce_network_policy():
    inputs = cluster_inputs()
    assert "masterAuthorizedNetworksConfig" not in inputs and "privateClusterConfig" not in inputs
    assert inputs["datapathProvider"] == "ADVANCED_DATAPATH"


def test_authorized_networks_reach_the_cluster_as_written():
    inputs = cluster_inputs(
        control_plane={"authorizedNetworks": [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}]}
    )
    assert inputs["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}]
    }
    assert "privateClusterConfig" not in inputs


def test_a_private_endpoint_turns_on_private_nodes_and_authorized_networks():
    inputs = cluster_inputs(control_plane={"privateEndpoint": True, "masterIpv4CidrBlock": "172.16.0.32/28"})
    assert inputs["privateClusterConfig"] == {
        "enablePrivateEndpoint": True,
        "enablePrivateNodes": True,
        "masterIpv4CidrBlock": "172.16.0.32/28",
    }
    assert inputs["masterAuthorizedNetworksConfig"] == {"cidrBlocks": []}  # only the VPC, no outside network


def test_dataplane_v2_can_be_kept_off_for_a_cluster_created_without_it():
    assert "datapathProvider" not in cluster_inputs(dataplane_v2=False)


def test_autopilot_is_left_to_its_own_dataplane_v2():
    inputs = cluster_inputs(mode="autopilot", location="us-central1")
    assert "datapathProvider" not in inputs and inputs["enableAutopilot"] is True


@pytest.mark.parametrize(
    ("control_plane", "message"),
    [
        (
            {"authorizedNetworks": [{"cidrBlock": "203.0.113.7"}]},
            "cluster.controlPlane.authorizedNetworks[0].cidrBlock: '203.0.113.7' is not accepted; "
            "write an IPv4 CIDR range with a prefix length",
        ),
        (
            {"authorizedNetworks": [{"cidrBlock": "203.0.113.7/24"}]},
            "cluster.controlPlane.authorizedNetworks[0].cidrBlock: '203.0.113.7/24' is not accepted; "
            "write an IPv4 CIDR range with its network address",
        ),
        (
            {"authorizedNetworks": [{"cidrBlock": "2001:db8::/32"}]},
            "cluster.controlPlane.authorizedNetworks[0].cidrBlock: '2001:db8::/32' is not accepted",
        ),
        (
            {"privateEndpoint": True, "masterIpv4CidrBlock": "8.8.8.0/28"},
            "cluster.controlPlane.masterIpv4CidrBlock: '8.8.8.0/28' is not accepted; write a private /28 range",
        ),
        ({"authorisedNetworks": []}, "did you mean 'authorizedNetworks'?"),
    ],
)
def test_bad_control_plane_settings_are_refused_with_their_key(control_plane, message):
    assert message in refused(lambda: TpuCluster("bad", {"project": "proj", **ZONE, "controlPlane": control_plane}))


def test_a_cluster_kept_without_dataplane_v2_says_so_in_the_plan(monkeypatch):
    import pulumi

    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *args, **kwargs: warned.append(message))
    capture(lambda: TpuCluster("c", {"project": "proj", **ZONE, "dataplane_v2": False}))
    assert any("NetworkPolicies are declared but not enforced" in message for message in warned)
    warned.clear()
    capture(lambda: TpuCluster("c", {"project": "proj", **ZONE}))
    assert not any("NetworkPolicies" in message for message in warned)

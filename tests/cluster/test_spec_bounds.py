"""cluster/spec.py's bounds at their edges, each against the page that sets it.

- A node pool's autoscaling minimum may be 0 (GKE API, NodePoolAutoscaling.minNodeCount: "greater than or equal
  to 0"; https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools).
- Threads per core are 1 (SMT off) or 2, a physical core's two hardware threads
  (https://cloud.google.com/compute/docs/instances/configuring-simultaneous-multithreading).
- Authorized networks are IPv4 CIDR blocks (https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks).
- A private control plane's range is an RFC 1918 /28
  (https://cloud.google.com/kubernetes-engine/docs/how-to/legacy/network-isolation: `--master-ipv4-cidr`, "a /28").
- A proxy-only subnet needs a range of /26 or larger, Google recommends /23
  (https://cloud.google.com/load-balancing/docs/proxy-only-subnets).
- README.md ("cluster"): `count` identical slices (one by default), `nodes` for single-host pools; docs/jetstream.md:
  `jobsPool.maxNodes`, default 1. The upper limits of `count` (64) and `jobsPool.maxNodes` (16) are this project's
  own choice, with no upstream page behind them: the test reads each from the schema pydantic publishes, checks the
  bound holds at its edge, and pins the number so that changing it is a deliberate edit here too.
"""

from __future__ import annotations

import warnings

import pytest
from pydantic import ValidationError

from tpu_stacks.cluster.spec import (
    AuthorizedNetwork,
    Autoscaling,
    ClusterSpec,
    ControlPlaneSpec,
    JobsPoolSpec,
    KubeRaySpec,
    ProxyOnlySubnetSpec,
    SliceSpec,
    SystemPoolSpec,
    operator_namespace,
    workload_cluster,
)


def _refused(model, **fields) -> None:
    with pytest.raises(ValidationError):
        model(**fields)


def test_autoscaling_starts_at_zero_and_allows_at_least_one_node():
    assert (Autoscaling().min_nodes, Autoscaling().max_nodes) == (0, None)
    assert Autoscaling(minNodes=0, maxNodes=1).max_nodes == 1
    _refused(Autoscaling, minNodes=-1)
    _refused(Autoscaling, maxNodes=0)


def test_a_slice_is_one_slice_of_at_least_one_and_pools_may_hold_zero_nodes():
    one = SliceSpec(generation="v6e", topology="2x4")
    assert (one.count, one.nodes, one.threads_per_core) == (1, None, None)
    assert SliceSpec(generation="v6e", topology="2x4", count=1).count == 1
    _refused(SliceSpec, generation="v6e", topology="2x4", count=0)
    assert SliceSpec(generation="v6e", topology="1x1", nodes=0).nodes == 0
    _refused(SliceSpec, generation="v6e", topology="1x1", nodes=-1)


def test_threads_per_core_are_one_or_two():
    for threads in (1, 2):
        assert SliceSpec(generation="v6e", topology="4x4", threadsPerCore=threads).threads_per_core == threads
    for threads in (0, 3):
        _refused(SliceSpec, generation="v6e", topology="4x4", threadsPerCore=threads)


def _maximum(model, field: str) -> int:
    return model.model_json_schema(by_alias=True)["properties"][field]["maximum"]


def test_the_project_s_own_upper_limits_are_the_published_ones():
    top = _maximum(SliceSpec, "count")
    assert SliceSpec(generation="v6e", topology="2x4", count=top).count == top
    _refused(SliceSpec, generation="v6e", topology="2x4", count=top + 1)
    assert top == 64
    jobs = _maximum(JobsPoolSpec, "maxNodes")
    assert JobsPoolSpec(maxNodes=jobs).max_nodes == jobs
    _refused(JobsPoolSpec, maxNodes=jobs + 1)
    assert jobs == 16


def test_cpu_pools_hold_one_node_by_default_and_never_zero():
    assert SystemPoolSpec().nodes == 1
    assert SystemPoolSpec(nodes=1).nodes == 1
    _refused(SystemPoolSpec, nodes=0)
    assert JobsPoolSpec().max_nodes == 1
    assert JobsPoolSpec(maxNodes=1).max_nodes == 1
    _refused(JobsPoolSpec, maxNodes=0)


@pytest.mark.parametrize("cidr", ["203.0.113.0/24", "0.0.0.0/0", "198.51.100.7/32"])
def test_an_authorized_network_is_an_ipv4_block(cidr):
    assert AuthorizedNetwork(cidrBlock=cidr).cidr_block == cidr


@pytest.mark.parametrize("cidr", ["203.0.113.7", "203.0.113.1/24", "2001:db8::/32", "not-a-range"])
def test_an_authorized_network_refuses_an_address_host_bits_and_ipv6(cidr):
    _refused(AuthorizedNetwork, cidrBlock=cidr)


def test_a_private_control_plane_takes_a_private_slash_28():
    assert ControlPlaneSpec().master_ipv4_cidr_block is None
    assert ControlPlaneSpec(masterIpv4CidrBlock="172.16.0.32/28").master_ipv4_cidr_block == "172.16.0.32/28"
    for cidr in ("172.16.0.0/27", "172.16.0.0/29", "8.8.8.0/28", "172.16.0.1/28"):
        _refused(ControlPlaneSpec, masterIpv4CidrBlock=cidr)


def test_a_proxy_only_subnet_is_private_and_a_slash_26_or_larger():
    assert ProxyOnlySubnetSpec().range == "192.168.64.0/23"
    for cidr in ("10.1.0.0/26", "192.168.64.0/23", "10.0.0.0/8"):
        assert ProxyOnlySubnetSpec(range=cidr).range == cidr
    for cidr in ("10.1.0.0/27", "8.8.0.0/23", "10.1.0.1/26", "10.1.0.0", "fd00::/64"):
        _refused(ProxyOnlySubnetSpec, range=cidr)


def test_adopting_a_proxy_only_subnet_needs_its_range():
    _refused(ProxyOnlySubnetSpec, existing="proxy-subnet")
    adopted = ProxyOnlySubnetSpec(existing="proxy-subnet", range="10.129.0.0/23")
    assert (adopted.existing, adopted.range) == ("proxy-subnet", "10.129.0.0/23")
    assert ProxyOnlySubnetSpec(range="10.129.0.0/23").existing is None


def test_the_operator_namespace_is_the_user_s_kuberay_or_the_add_on_s():
    spec = ClusterSpec(project="p", location="us-east5-b")
    assert operator_namespace(spec) is None
    mine = ClusterSpec(project="p", location="us-east5-b", kuberay=KubeRaySpec(namespace="ray-system"))
    assert operator_namespace(mine) == "ray-system"


def test_a_workload_s_cluster_input_is_a_required_cluster_spec():
    field = workload_cluster("where it runs")
    assert (field.name, field.kind, field.doc, field.required) == ("cluster", ClusterSpec, "where it runs", True)


def test_the_subnet_s_check_hands_pydantic_back_the_model():
    """An `after` model validator must return the instance (pydantic's docs, "Model validators"; 2.14 warns when it
    does not: "Returning anything other than `self` ... isn't supported")."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ProxyOnlySubnetSpec(range="10.129.0.0/23").range == "10.129.0.0/23"
        assert ProxyOnlySubnetSpec(existing="proxy-subnet", range="10.129.0.0/23").existing == "proxy-subnet"

"""no-public-endpoint (advisory): the tutorials' public LoadBalancer, and its private forms."""

from tests.policies import objects as o
from tests.policies.harness import capture, of, run

POLICY = "no-public-endpoint"


def check(build, config=None):
    return of(run(capture(build), config), POLICY)


def test_public_load_balancer_is_reported_as_advisory():
    (problem,) = check(lambda: o.service("sax-http-lb"))
    assert problem.level == "advisory" and problem.urn.endswith("Service::sax-http-lb")
    assert "Service serving/sax-http-lb is a public LoadBalancer" in problem.message
    assert 'networking.gke.io/load-balancer-type: "Internal"' in problem.message


def test_internal_or_source_restricted_or_cluster_ip_pass():
    assert check(lambda: o.service("lb", notes={"networking.gke.io/load-balancer-type": "Internal"})) == []
    assert check(lambda: o.service("lb", notes={"cloud.google.com/load-balancer-type": "Internal"})) == []
    assert check(lambda: o.service("lb", loadBalancerSourceRanges=["10.0.0.0/8"])) == []
    assert check(lambda: o.service("vllm", kind="ClusterIP")) == []


def test_deliberately_public_services_can_be_allowed():
    assert check(lambda: o.service("gateway"), {POLICY: {"allowedServices": ["serving/gateway"]}}) == []


def test_source_ranges_that_together_cover_the_internet_are_reported():
    halves = ["0.0.0.0/1", "128.0.0.0/1"]
    (problem,) = check(lambda: o.service("lb", loadBalancerSourceRanges=halves))
    assert "together cover 0.0.0.0/0" in problem.message
    quarters_v6 = ["::/2", "4000::/2", "8000::/1"]
    (problem,) = check(lambda: o.service("lb6", loadBalancerSourceRanges=quarters_v6))
    assert "together cover ::/0" in problem.message


def test_source_ranges_that_leave_addresses_out_pass():
    # Three quarters of IPv4 (the 192.0.0.0/2 quarter missing), and one half of each family.
    three_quarters = ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2"]
    assert check(lambda: o.service("lb", loadBalancerSourceRanges=three_quarters)) == []
    assert check(lambda: o.service("lb2", loadBalancerSourceRanges=["0.0.0.0/1", "::/1"])) == []

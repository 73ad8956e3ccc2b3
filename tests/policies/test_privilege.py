"""no-privileged-pods (advisory): privileged and host-network pods need a stated reason."""

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tpu_stacks.annotations import HOST_NETWORK_REASON, PRIVILEGED_REASON

POLICY = "no-privileged-pods"


def sax(notes=None, **pod):
    return lambda: o.jobset("sax", o.pod("tpu-v5-lite-podslice", "4x8", 4, **pod), 8, notes=notes)


def check(build):
    return of(run(capture(build)), POLICY)


def test_privileged_container_without_a_reason():
    (problem,) = check(sax(securityContext={"privileged": True}))
    assert problem.level == "advisory" and "container(s) server run privileged" in problem.message
    assert "since GKE 1.28" in problem.message and PRIVILEGED_REASON in problem.message


def test_host_network_without_a_reason():
    (problem,) = check(sax(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet"))
    assert "hostNetwork is true" in problem.message and HOST_NETWORK_REASON in problem.message


def test_a_stated_reason_is_accepted_and_plain_pods_pass():
    notes = {PRIVILEGED_REASON: "libtpu on GKE 1.27", HOST_NETWORK_REASON: "Saxml multi-host port 8471"}
    assert check(sax(notes, securityContext={"privileged": True}, hostNetwork=True)) == []
    assert check(sax()) == []

"""no-privileged-pods (mandatory by default): privileged and host-network pods need a stated reason."""

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tpu_stacks.objects.annotations import HOST_NETWORK_REASON, PRIVILEGED_REASON

POLICY = "no-privileged-pods"


def sax(notes=None, **pod):
    return lambda: o.jobset("sax", o.pod("tpu-v5-lite-podslice", "4x8", 4, **pod), 8, notes=notes)


def check(build):
    return of(run(capture(build)), POLICY)


def test_privileged_container_without_a_reason():
    (problem,) = check(sax(securityContext={"privileged": True}))
    assert problem.level == "mandatory" and "container(s) server run privileged" in problem.message
    assert "since GKE 1.28" in problem.message and PRIVILEGED_REASON in problem.message


def test_host_network_without_a_reason():
    (problem,) = check(sax(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet"))
    assert "hostNetwork is true" in problem.message and HOST_NETWORK_REASON in problem.message


def test_a_stated_reason_is_accepted_and_plain_pods_pass():
    notes = {PRIVILEGED_REASON: "libtpu on GKE 1.27", HOST_NETWORK_REASON: "Saxml multi-host port 8471"}
    assert check(sax(notes, securityContext={"privileged": True}, hostNetwork=True)) == []
    assert check(sax()) == []


def test_mandatory_by_default_and_advisory_by_config():
    """A raw program's privileged pod fails the preview unless the pack config lowers the rule."""
    found = run(capture(sax(securityContext={"privileged": True}, hostNetwork=True)))
    assert [d.level for d in of(found, POLICY)] == ["mandatory", "mandatory"]
    lowered = run(capture(sax(securityContext={"privileged": True})), {POLICY: "advisory"})
    assert [d.level for d in of(lowered, POLICY)] == ["advisory"]


def test_the_reason_may_sit_on_the_pod_template():
    notes = {HOST_NETWORK_REASON: "Saxml multi-host port 8471"}
    assert (
        check(lambda: o.deployment("d", o.pod("tpu-v5-lite-podslice", "2x4", 8, hostNetwork=True), None, notes)) == []
    )

"""The probe run against a fake CoreV1Api answering with synthetic Pods: PASS, FAIL and UNKNOWN for each kind of
answer, every pod deleted (also when the run raises), and the public entry point on a shipped stack's objects."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from tests.live.probe.fake_core import Clock, FakeCoreV1, fixture
from tests.live.probe.stacks import objects
from tpu_stacks_live.probe import probe_checks
from tpu_stacks_live.verdict import Verdict

SERVER = fixture("running-server")
ALL_PASS = {
    "probe-dns": ["dns-resolved"],
    "probe-tpu-runtime": ["tpu-runtime-refused"],
    "probe-metadata-server": ["metadata-http"],
    "probe-google-apis": ["google-apis-connected"],
    "probe-api-server": ["api-server-http"],
    "probe-peer": ["connect-connected"],
    "probe-deny": ["connect-timeout"],
}


@pytest.fixture(scope="module")
def gateway() -> list[dict]:
    """The vllm-gateway stack's vllm namespace: its server, picker and smoke-test policies."""
    return [o for o in objects("vllm-gateway") if (o.get("metadata") or {}).get("namespace") == "vllm"]


def only(objs: list[dict], *policies: str) -> list[dict]:
    """The objects with only the named NetworkPolicies (the others' probes left out)."""
    return [o for o in objs if o["kind"] != "NetworkPolicy" or o["metadata"]["name"] in policies]


def go(objs, fake, timeout_s=60, clock=None):
    clock = clock or Clock()
    results = probe_checks(objs, None, timeout_s=timeout_s, core=fake, clock=clock, sleep=clock.sleep, run_id="r1")
    return {r.check: r for r in results}, clock


def test_dns_pass_fail_and_a_missing_name(gateway):
    objs = only(gateway, "vllm-epp")
    results, _ = go(objs, FakeCoreV1({**ALL_PASS, "probe-dns": ["dns-resolved"]}, [SERVER]))
    assert results["probe-dns:vllm/vllm-epp"].verdict is Verdict.PASS
    results, _ = go(objs, FakeCoreV1({**ALL_PASS, "probe-dns": ["dns-timeout"]}, [SERVER]))
    failed = results["probe-dns:vllm/vllm-epp"]
    assert failed.verdict is Verdict.FAIL and "NetworkPolicy vllm/vllm-epp must let its pods out on 53" in failed.fix
    results, _ = go(objs, FakeCoreV1({**ALL_PASS, "probe-dns": ["dns-no-such-name"]}, [SERVER]))
    missing = results["probe-dns:vllm/vllm-epp"]
    assert missing.verdict is Verdict.FAIL and missing.fix.startswith("DNS answers but knows no vllm-epp:")


def test_the_tpu_runtime_passes_on_a_reset_from_the_node_and_fails_on_silence(gateway):
    objs = only(gateway, "vllm-server")
    results, _ = go(objs, FakeCoreV1(ALL_PASS, [SERVER]))
    assert results["probe-tpu-runtime:vllm/vllm-server"].verdict is Verdict.PASS
    results, _ = go(objs, FakeCoreV1({**ALL_PASS, "probe-tpu-runtime": ["tpu-runtime-timeout"]}, [SERVER]))
    failed = results["probe-tpu-runtime:vllm/vllm-server"]
    assert failed.verdict is Verdict.FAIL and "8353/TCP with no peer" in failed.fix
    assert "expected connected or refused, got node:8353 timeout" in failed.detail


def test_a_report_without_the_probes_attempts_is_unknown_not_a_pass(gateway):
    # The metadata probe's attempt is `metadata`; a report of another attempt does not answer it.
    other = {**ALL_PASS, "probe-metadata-server": ["api-server-http"]}
    results, _ = go(only(gateway, "vllm-server"), FakeCoreV1(other, [SERVER]))
    assert results["probe-metadata-server:vllm/vllm-server"].verdict is Verdict.UNKNOWN
    results, _ = go(only(gateway, "vllm-server"), FakeCoreV1(ALL_PASS, [SERVER]))
    assert results["probe-metadata-server:vllm/vllm-server"].verdict is Verdict.PASS
    results, _ = go(
        only(gateway, "vllm-server"), FakeCoreV1({**ALL_PASS, "probe-metadata-server": ["metadata-timeout"]}, [SERVER])
    )
    assert results["probe-metadata-server:vllm/vllm-server"].verdict is Verdict.FAIL


def test_peer_and_deny_probes_connect_to_the_running_server_and_judge_opposite(gateway):
    objs = only(gateway, "vllm-server", "vllm-epp")
    fake = FakeCoreV1(ALL_PASS, [SERVER])
    results, _ = go(objs, fake)
    assert results["probe-peer:vllm/vllm-epp->vllm/vllm-server:8000"].verdict is Verdict.PASS
    assert results["probe-deny:vllm/vllm-server:8000"].verdict is Verdict.PASS
    peer = next(p for p in fake.created if p["metadata"]["labels"].get("tpu-stacks.dev/probe-kind") == "peer")
    assert '"host":"10.8.2.5","port":8000' in peer["spec"]["containers"][0]["command"][3]  # the server's podIP
    results, _ = go(
        objs, FakeCoreV1({**ALL_PASS, "probe-peer": ["connect-timeout"], "probe-deny": ["connect-connected"]}, [SERVER])
    )
    assert results["probe-peer:vllm/vllm-epp->vllm/vllm-server:8000"].verdict is Verdict.FAIL
    denied = results["probe-deny:vllm/vllm-server:8000"]
    assert denied.verdict is Verdict.FAIL and "admits a pod the contract does not name on 8000" in denied.fix


def test_a_peer_probe_without_a_running_server_is_unknown_and_creates_no_pod(gateway):
    fake = FakeCoreV1(ALL_PASS, [])
    results, _ = go(only(gateway, "vllm-server", "vllm-epp"), fake)
    result = results["probe-peer:vllm/vllm-epp->vllm/vllm-server:8000"]
    assert result.verdict is Verdict.UNKNOWN and "no running pod app=vllm-tpu,!tpu-stacks.dev/probe" in result.detail
    assert not any(p["metadata"]["labels"]["tpu-stacks.dev/probe-kind"] in ("peer", "deny") for p in fake.created)


@pytest.mark.parametrize(
    "name, reason",
    [("pending-unschedulable", "Unschedulable: 0/3 nodes are available"), ("pending-image-pull", "ImagePullBackOff")],
)
def test_a_pod_that_never_starts_is_unknown_with_its_reason_after_the_timeout(gateway, name, reason):
    fake = FakeCoreV1({**ALL_PASS, "probe-dns": [name]}, [SERVER])
    results, clock = go(only(gateway, "vllm-epp"), fake, timeout_s=20)
    result = results["probe-dns:vllm/vllm-epp"]
    assert result.verdict is Verdict.UNKNOWN and reason in result.detail and "within 20s" in result.detail
    assert 20 <= clock.now <= 22
    assert not fake.pods  # deleted


def test_a_pod_that_finishes_after_a_while_is_read_again_until_it_reports(gateway):
    fake = FakeCoreV1({**ALL_PASS, "probe-dns": ["pending-image-pull", "pending-image-pull", "dns-resolved"]}, [SERVER])
    results, clock = go(only(gateway, "vllm-epp"), fake)
    assert results["probe-dns:vllm/vllm-epp"].verdict is Verdict.PASS and clock.sleeps == 2


def test_a_probe_that_could_not_run_its_program_is_unknown(gateway):
    results, _ = go(only(gateway, "vllm-epp"), FakeCoreV1({**ALL_PASS, "probe-dns": ["no-report"]}, [SERVER]))
    result = results["probe-dns:vllm/vllm-epp"]
    assert result.verdict is Verdict.UNKNOWN and "exited 127 (ContainerCannotRun)" in result.detail


def test_a_refused_create_is_unknown_with_the_apis_reason_and_the_rest_still_run():
    objs = objects("vllm-gateway")
    fake = FakeCoreV1(ALL_PASS, [SERVER], refuse_create={"custom-metrics"})
    results, _ = go(objs, fake)
    refused = results["probe-api-server:custom-metrics/custom-metrics-adapter"]
    assert refused.verdict is Verdict.UNKNOWN and 'cannot create resource "pods"' in refused.detail
    assert results["probe-api-server:vllm/vllm-epp"].verdict is Verdict.PASS


def test_every_pod_is_deleted_even_when_reading_one_raises(gateway):
    fake = FakeCoreV1(ALL_PASS, [SERVER])

    def broken(name, namespace):
        raise RuntimeError("connection reset by the API server")

    fake.read_namespaced_pod = broken
    with pytest.raises(RuntimeError):
        go(gateway, fake)
    assert fake.created and not fake.pods and len(fake.deleted) == len(fake.created)


def test_a_pod_that_could_not_be_deleted_is_reported_with_the_command_that_removes_it(gateway):
    fake = FakeCoreV1(ALL_PASS, [SERVER])

    def forbidden(name, namespace, grace_period_seconds=None):
        raise ApiException(status=403, reason="Forbidden")

    fake.delete_namespaced_pod = forbidden
    results, _ = go(only(gateway, "vllm-epp"), fake)
    cleanup = results["probe-cleanup"]
    assert cleanup.verdict is Verdict.UNKNOWN and cleanup.fix.endswith(
        "-l tpu-stacks.dev/probe=true,tpu-stacks.dev/probe-run=r1"
    )


def test_a_shipped_stack_all_passing_creates_one_pod_per_probe_and_deletes_them_all():
    objs = objects("vllm-gateway")
    answers = {**ALL_PASS, "probe-metadata-server": ["metadata-timeout"]}
    fake = FakeCoreV1(answers, [SERVER, {**SERVER, "metadata": {**SERVER["metadata"], "labels": {"app": "vllm-epp"}}}])
    results, _ = go(objs, fake)
    verdicts = {check: r.verdict for check, r in results.items()}
    assert verdicts["probe-metadata-server:vllm/vllm-server"] is Verdict.FAIL
    assert all(v is Verdict.PASS for c, v in verdicts.items() if not c.startswith("probe-metadata")), verdicts
    assert len(fake.created) == len(results) and not fake.pods
    assert all(p["metadata"]["labels"]["tpu-stacks.dev/probe-run"] == "r1" for p in fake.created)


def test_a_pod_gone_before_it_reported_is_unknown_and_the_others_are_judged(gateway):
    fake = FakeCoreV1(ALL_PASS, [SERVER])
    read = fake.read_namespaced_pod

    def evicted(name, namespace):
        if "-dns-" in name:
            raise ApiException(status=404, reason="Not Found", body='{"message": "pods \\"x\\" not found"}')
        return read(name, namespace)

    fake.read_namespaced_pod = evicted
    results, _ = go(only(gateway, "vllm-epp"), fake)
    gone = results["probe-dns:vllm/vllm-epp"]
    assert gone.verdict is Verdict.UNKNOWN and "could not be read: pods" in gone.detail
    assert results["probe-api-server:vllm/vllm-epp"].verdict is Verdict.PASS

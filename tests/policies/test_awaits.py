"""await-covers-startup (mandatory): `pulumi up` waits at least as long as the probes let pods start.

Raw pulumi-kubernetes objects with no tpu-stacks annotation (the rule needs none), and our
components, whose budgets come from the same probes (tpu_stacks.k8s.probes)."""

import dataclasses

import pulumi
import pulumi_kubernetes as k8s
import pytest

from tests.clients import CLIENTS
from tests.policies import objects as o
from tests.policies.harness import UNKNOWN_STRING, capture, of, run
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.raytrain.component import RayTrainStack
from tpu_stacks.saxml.component import SaxmlStack
from tpu_stacks.vllm.component import VllmStack

POLICY = "await-covers-startup"
FORTY_MINUTES = {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": 240}


def server(startup=None, liveness=None, notes=None, timeouts=None, replicas=1):
    """A vLLM-like Deployment as a user writes it with pulumi-kubernetes: no project annotation."""
    container = {"name": "vllm", "image": "vllm/vllm-tpu:v0.11.1", "ports": [{"containerPort": 8000}]}
    if startup is not None:
        container["startupProbe"] = startup
    if liveness is not None:
        container["livenessProbe"] = liveness
    return lambda: k8s.apps.v1.Deployment(
        "vllm",
        metadata={"name": "vllm", "namespace": "serving", "annotations": notes},
        spec={
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "vllm"}},
            "template": {"metadata": {"labels": {"app": "vllm"}}, "spec": {"containers": [container]}},
        },
        opts=pulumi.ResourceOptions(custom_timeouts=timeouts),
    )


def check(build, config=None):
    return of(run(capture(build), config), POLICY)


def test_forty_minute_startup_probe_against_the_default_ten_minute_wait():
    (problem,) = check(server(startup=FORTY_MINUTES))
    assert problem.level == "mandatory"
    assert "Deployment serving/vllm" in problem.message and "up to 40m to start" in problem.message
    assert "spec.template: container vllm startupProbe" in problem.message
    assert "create 10m (pulumi-kubernetes' default), update 10m (pulumi-kubernetes' default)" in problem.message
    assert "customTimeouts (create and update) to at least 40m" in problem.message


def test_custom_timeouts_that_cover_the_probe_pass():
    assert check(server(startup=FORTY_MINUTES, timeouts=pulumi.CustomTimeouts(create="45m", update="1h"))) == []


def test_each_operation_is_judged_create_only_leaves_updates_at_ten_minutes():
    (problem,) = check(server(startup=FORTY_MINUTES, timeouts=pulumi.CustomTimeouts(create="45m")))
    assert "waits only update 10m (pulumi-kubernetes' default) for it" in problem.message


def test_the_provider_timeout_annotation_counts_when_no_custom_timeouts():
    assert check(server(startup=FORTY_MINUTES, notes={"pulumi.com/timeoutSeconds": "3000"})) == []
    (problem,) = check(server(startup=FORTY_MINUTES, notes={"pulumi.com/timeoutSeconds": "900"}))
    assert "create 15m (annotation pulumi.com/timeoutSeconds)" in problem.message
    # customTimeouts win over the annotation, as in the provider
    (problem,) = check(
        server(
            startup=FORTY_MINUTES,
            notes={"pulumi.com/timeoutSeconds": "3000"},
            timeouts=pulumi.CustomTimeouts(create="20m", update="20m"),
        )
    )
    assert "create 20m (customTimeouts)" in problem.message


def test_liveness_counts_when_there_is_no_startup_probe():
    slow = {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 900, "failureThreshold": 3}
    (problem,) = check(server(liveness=slow))
    assert "up to 15m30s to start" in problem.message and "livenessProbe" in problem.message  # 900 + 3 x 10 s
    # with a startup probe, liveness waits for it: only the startup probe's window counts
    assert check(server(startup={"tcpSocket": {"port": 8000}}, liveness=slow)) == []


def test_ordinary_probes_and_skip_await_pass():
    quick = {"httpGet": {"path": "/", "port": 8000}, "periodSeconds": 15, "failureThreshold": 4}
    assert check(server(liveness=quick)) == []
    assert check(server()) == []
    assert check(server(startup=FORTY_MINUTES, notes={"pulumi.com/skipAwait": "true"})) == []


def test_margin_setting_asks_for_room_beyond_the_probes():
    fits = server(startup=FORTY_MINUTES, timeouts=pulumi.CustomTimeouts(create="45m", update="45m"))
    assert check(fits) == []
    (problem,) = check(fits, {POLICY: {"marginMinutes": 10}})
    assert "at least 50m" in problem.message
    assert [d.level for d in check(server(startup=FORTY_MINUTES), {POLICY: "advisory"})] == ["advisory"]


def test_custom_resources_count_only_when_the_provider_awaits_them():
    pod = o.pod("tpu-v5-lite-podslice", "4x8", 4)
    pod["containers"][0]["startupProbe"] = FORTY_MINUTES
    assert check(lambda: o.jobset("sax", pod, 8)) == []  # reported ready at once: nothing times out
    awaited = {"pulumi.com/waitFor": "jsonpath={.status.replicatedJobsStatus[0].ready}=1"}
    (problem,) = check(lambda: o.jobset("sax", pod, 8, notes=awaited))
    assert problem.message.startswith("JobSet sax:") and "spec.replicatedJobs[0].template.spec.template" in (
        problem.message
    )


def test_a_probe_unknown_at_preview_is_skipped():
    registrations = capture(server(startup=FORTY_MINUTES))
    (deployment,) = registrations
    probe = deployment.props["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
    probe["failureThreshold"] = UNKNOWN_STRING
    assert of(run([deployment]), POLICY) == []


TPU_STACKS = {
    "vllm": lambda: VllmStack(
        "vllm",
        {
            "cluster": {"project": "proj", "location": "us-central1-b"},
            "model": "meta-llama/Llama-3.1-70B",
            "tpu_generation": "v6e",
            "source_ranges": CLIENTS,
            "hf_token": pulumi.Output.secret("t"),
        },
    ),
    "jetstream": lambda: JetStreamStack(
        "jetstream",
        {
            "cluster": {"project": "proj", "location": "us-west4"},
            "model": "google/gemma-7b-it",
            "zone": "us-west4-a",
            "hf_token": pulumi.Output.secret("t"),
        },
    ),
    "saxml": lambda: SaxmlStack(
        "saxml", {"cluster": {"project": "proj", "location": "us-central1-a"}, "source_ranges": CLIENTS}
    ),
    "raytrain": lambda: RayTrainStack(
        "raytrain",
        {
            "cluster": {"project": "proj", "location": "us-east5-b"},
            "model": "llama3-8b",
            "tpu_generation": "v6e",
            "topology": "4x4",
            "parallelism": {"fsdp": 4, "tensor": 4},
        },
    ),
}


@pytest.mark.parametrize("stack", TPU_STACKS)
def test_our_components_wait_as_long_as_their_probes_allow(stack):
    assert check(TPU_STACKS[stack]) == []


def test_without_its_budget_our_vllm_deployment_would_be_refused():
    """The fix is what passes: the same Deployment with the provider's default wait is refused."""
    registrations = capture(TPU_STACKS["vllm"])
    (deployment,) = [r for r in registrations if r.name == "vllm-deployment"]
    assert deployment.custom_timeouts == {"create": "65m", "update": "115m"}
    (problem,) = of(run([dataclasses.replace(deployment, custom_timeouts={})]), POLICY)
    assert "up to 40m to start" in problem.message

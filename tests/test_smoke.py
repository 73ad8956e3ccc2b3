"""The smoke-test Job in the plans: in every shipped serving stack, after the server, awaited, named by
what it tests, and gone when switched off.

The script itself is tested against a stand-in server in tests/k8s/test_smoke_check.py; the policy pack
judges every shipped stack's Job with the rest of its pods in tests/stacks/test_shipped_stacks.py.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pulumi
import pytest

from tests.clients import CLIENTS
from tests.mocks import capture
from tests.shipped import shipped
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.jetstream.engine import JETSTREAM
from tpu_stacks.objects.awaits import job_budget
from tpu_stacks.saxml.component import SaxmlStack
from tpu_stacks.serving.engine_flags import flag_value
from tpu_stacks.serving.smoke_plan import POD_LABELS, POD_START_MINUTES, SCRIPT, script_source
from tpu_stacks.vllm.component import VllmStack
from tpu_stacks_preview.engine import run_program

ROOT = Path(__file__).resolve().parents[1]
JOB = "kubernetes:batch/v1:Job"
SERVERS = {  # the object each stack's server is awaited as, and its Service
    "dev": ("vllm-deployment", "vllm-service"),
    "vllm": ("vllm-deployment", "vllm-service"),
    "vllm-fallback": ("vllm-deployment", "vllm-service"),
    "vllm-gateway": ("vllm-deployment", "vllm-service"),
    "vllm-405b": ("vllm-rayservice", "vllm-service"),  # a multi-host slice: Ray Serve behind the same Service
    "saxml": ("saxml-publisher", "saxml-http-service"),
    "saxml-s3ns": ("saxml-publisher", "saxml-http-service"),
    "jetstream-gemma": ("jetstream-deployment", "jetstream-service"),
    "jetstream-llama3": ("jetstream-deployment", "jetstream-service"),
}
CLUSTER = {"project": "proj", "location": "us-central1-b", "release_channel": "RAPID"}
QWEN = {
    "cluster": CLUSTER,
    "model": "Qwen/Qwen2.5-1.5B-Instruct",
    "replicas": {"min": 1, "max": 2},
    "source_ranges": CLIENTS,
}


@cache
def planned(stack: str):
    capture_ = shipped(stack)
    assert capture_.error is None, capture_.error
    return {r.name: r for r in capture_.resources}


def smoke_jobs(resources) -> list:
    return [
        r
        for r in resources.values()
        if r.type == JOB and r.inputs["metadata"]["labels"].get("app.kubernetes.io/component") == "smoke-test"
    ]


def env_of(job_inputs) -> dict[str, object]:
    (container,) = job_inputs["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


@pytest.mark.parametrize("stack", sorted(SERVERS))
def test_each_serving_stack_ends_with_an_awaited_smoke_test_after_its_server(stack):
    resources = planned(stack)
    (job,) = smoke_jobs(resources)
    server, service = SERVERS[stack]
    assert resources[server].urn in job.depends_on and resources[service].urn in job.depends_on
    script = resources[f"{job.name}-script"]
    assert script.urn in job.depends_on and script.inputs["data"] == {SCRIPT: script_source()}
    spec = job.inputs["spec"]
    assert "ttlSecondsAfterFinished" not in spec  # a finished Job stays: the next `up` finds it unchanged
    # a failed test is final (BackoffLimitExceeded, which the awaiter fails on at once); a disrupted pod is replaced
    assert spec["backoffLimit"] == 0
    assert spec["podFailurePolicy"] == {
        "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]
    }
    assert spec["template"]["spec"]["restartPolicy"] == "Never"  # required by a podFailurePolicy
    assert not any(rule["action"] == "FailJob" for rule in spec["podFailurePolicy"]["rules"])
    # awaited by the provider's Job awaiter until just after the Job's own deadline, never the 10-minute default
    budget = job_budget(spec["activeDeadlineSeconds"])
    assert job.options.custom_timeouts == {"create": f"{budget.create_minutes}m", "update": f"{budget.update_minutes}m"}
    metadata = job.inputs["metadata"]
    assert metadata["annotations"] == {"pulumi.com/replaceUnready": "true"}  # a failed Job runs again next `up`
    assert metadata["name"].startswith("smoke-test-") and len(metadata["name"]) == len("smoke-test-") + 10
    pod = spec["template"]
    assert pod["metadata"]["labels"] == POD_LABELS
    (container,) = pod["spec"]["containers"]
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert container["command"] == ["python3", f"/opt/smoke-test/{SCRIPT}"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    # No API token, unless it reads its Gateway's address (the vllm-gateway stack, below)
    reads_gateway = "SMOKE_GATEWAY" in env_of(job.inputs)
    assert pod["spec"]["securityContext"]["runAsUser"] == 65534
    assert pod["spec"]["automountServiceAccountToken"] is reads_gateway
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "128Mi"}
    assert container["image"] == "docker.io/library/python:3.12.8-slim-bookworm"


def assert_the_script_speaks_before_the_deadline(job_inputs) -> None:
    """The script's window, its last request and the metrics read fit in its limit; its pod's start, that
    limit and a minute to report fit in the Job's `activeDeadlineSeconds`; the await outlasts that."""
    env = env_of(job_inputs)
    window, request = float(env["SMOKE_DEADLINE_SECONDS"]), float(env["SMOKE_TIMEOUT_SECONDS"])
    limit = float(env["SMOKE_LIMIT_SECONDS"])
    assert window + 2 * request <= limit
    deadline = job_inputs["spec"]["activeDeadlineSeconds"]
    assert POD_START_MINUTES * 60 + limit + 60 <= deadline
    assert job_budget(deadline).create_minutes * 60 > deadline


@pytest.mark.parametrize("stack", sorted(SERVERS))
def test_the_scripts_line_comes_before_the_jobs_deadline(stack):
    (job,) = smoke_jobs(planned(stack))
    assert_the_script_speaks_before_the_deadline(job.inputs)


def test_the_vllm_request_and_metrics_are_the_servers_and_the_catalogues():
    resources = planned("vllm")
    (job,) = smoke_jobs(resources)
    env = env_of(job.inputs)
    assert env["SMOKE_URL"] == "http://vllm-service.vllm.svc.cluster.local:8000/v1/completions"
    assert json.loads(env["SMOKE_BODY"]) == {
        "model": "meta-llama/Llama-3.1-70B",
        "prompt": "San Francisco is a",
        "max_tokens": 7,
        "temperature": 0,
    }
    assert env["SMOKE_METRICS_URL"] == "http://vllm-service.vllm.svc.cluster.local:8000/metrics"
    metrics = json.loads(env["SMOKE_METRICS"])
    hpa = resources["vllm-hpa"].inputs["spec"]["metrics"][0]["pods"]["metric"]["name"]
    assert hpa == "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"
    assert "vllm:num_requests_waiting" in metrics  # the HPA's metric, as the engine exposes it
    # every name is a catalogued vLLM metric (a histogram's `_bucket` sample of one)
    assert all(VLLM.metric(name) or VLLM.metric(name.removesuffix("_bucket")) for name in metrics)
    dashboard = json.dumps(resources["vllm-dashboard"].inputs)
    assert all(f"{name}{{" in dashboard or name == "vllm:num_requests_waiting" for name in metrics)
    assert "SMOKE_API_KEY" not in env  # no API key in this stack


def test_behind_the_gateway_the_request_goes_through_it_and_the_picker_must_pick_it():
    """The completion through the Gateway's address (read from its status by a ServiceAccount that may get that
    Gateway only), after the Gateway, its route, the pool and the picker; the picker's successful picks counted on
    its metrics Service; vLLM's own metrics still read through its Service; the API key from the Secret."""
    resources = planned("vllm-gateway")
    (job,) = smoke_jobs(resources)
    env = env_of(job.inputs)
    assert env["SMOKE_URL"] == "http://{gateway}:80/v1/completions"
    gateway = next(r for r in resources.values() if r.type.endswith(":Gateway"))
    listener = gateway.inputs["spec"]["listeners"][0]["port"]
    assert env["SMOKE_URL"].endswith(f":{listener}/v1/completions")
    assert env["SMOKE_GATEWAY"] == f"vllm/{gateway.inputs['metadata']['name']}"
    for kind in ("Gateway", "HTTPRoute", "InferencePool"):
        (found,) = [r for r in resources.values() if r.type.endswith(f":{kind}")]
        assert found.urn in job.depends_on, kind
    assert resources["vllm-epp"].urn in job.depends_on
    picker_service = resources["vllm-epp-service"].inputs
    metrics_port = next(p["port"] for p in picker_service["spec"]["ports"] if p["name"] == "http-metrics")
    assert env["SMOKE_PICKER_METRICS_URL"] == f"http://vllm-epp.vllm.svc.cluster.local:{metrics_port}/metrics"
    counter = json.loads(env["SMOKE_PICKER_COUNTER"])
    # llm-d's router's count of picks that chose a server (labelled with it: endpoint_name)
    assert counter == {"name": "llm_d_epp_scheduler_attempts_total", "labels": {"status": "success"}}
    assert env["SMOKE_METRICS_URL"] == "http://vllm-service.vllm.svc.cluster.local:8000/metrics"
    assert env["SMOKE_API_KEY"] == {"secretKeyRef": {"name": "hf-secret", "key": "api_key"}}
    pod = job.inputs["spec"]["template"]
    account = pod["spec"]["serviceAccountName"]
    assert pod["metadata"]["annotations"]["tpu-stacks.dev/api-token-reason"]
    (role,) = [r for r in resources.values() if r.type.endswith(":Role") and r.inputs["metadata"]["name"] == account]
    assert role.inputs["rules"] == [
        {
            "apiGroups": ["gateway.networking.k8s.io"],
            "resources": ["gateways"],
            "resourceNames": [gateway.inputs["metadata"]["name"]],
            "verbs": ["get"],
        }
    ]
    (binding,) = [
        r for r in resources.values() if r.type.endswith(":RoleBinding") and r.inputs["metadata"]["name"] == account
    ]
    assert binding.inputs["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": "vllm"}]


def test_jetstream_reads_the_engines_metrics_through_the_service_in_the_converter_flow():
    (job,) = smoke_jobs(planned("jetstream-gemma"))
    env = env_of(job.inputs)
    assert env["SMOKE_URL"] == "http://jetstream-svc.jetstream.svc.cluster.local:8000/generate"
    assert json.loads(env["SMOKE_BODY"]) == {"prompt": "What are the top 5 programming languages", "max_tokens": 16}
    assert env["SMOKE_METRICS_URL"] == "http://jetstream-svc.jetstream.svc.cluster.local:9090/metrics"
    assert json.loads(env["SMOKE_METRICS"]) == sorted(m.name for m in JETSTREAM[0].metrics)


def test_saxml_asks_the_published_model_and_no_metrics():
    (job,) = smoke_jobs(planned("saxml"))
    env = env_of(job.inputs)
    assert env["SMOKE_URL"] == "http://sax-http-lb.saxml.svc.cluster.local:8888/generate"
    assert json.loads(env["SMOKE_BODY"]) == {"model": "/sax/test/spmd", "query": "How many days are in a week?"}
    assert "SMOKE_METRICS" not in env and "SMOKE_METRICS_URL" not in env  # Saxml exports none


# -- the name: a hash of what it tests --------------------------------------------------------------------


def smoke_job(build) -> dict:
    mocks = capture(build)
    (job,) = [j for j in mocks.of_type(JOB) if j.name.endswith("-smoke-test")]
    return job.inputs


def vllm_job(**overrides) -> dict:
    args = {**QWEN, **overrides}
    return smoke_job(lambda: VllmStack("v", args))


def test_the_same_stack_gets_the_same_name_and_a_change_of_what_it_tests_a_new_one():
    name = vllm_job()["metadata"]["name"]
    assert vllm_job()["metadata"]["name"] == name  # two plans, one Job: a quiet `up` leaves it alone
    again = {r.name: r for r in run_program(ROOT, "vllm", preview=False).resources}
    assert (
        again["vllm-smoke-test"].inputs["metadata"]["name"]
        == planned("vllm")["vllm-smoke-test"].inputs["metadata"]["name"]
    )
    changed = {
        "model": vllm_job(model="google/gemma-7b", hf_token=pulumi.Output.secret("t")),
        "image": vllm_job(image="docker.io/vllm/vllm-tpu:v0.22.1"),
        "server flags": vllm_job(max_model_len=2048),
        "the HPA's metric": vllm_job(autoscaling={"metric": "kv_cache_usage_perc"}),
        "the dashboard's presence": vllm_job(monitoring={"enabled": False}),
    }
    for what, job in changed.items():
        assert job["metadata"]["name"] != name, what
    unrelated = {
        "alert timing": vllm_job(monitoring={"queue_minutes": 30}),
        "alert routing": vllm_job(monitoring={"notification_channels": ["projects/proj/notificationChannels/42"]}),
        "an alert turned off": vllm_job(monitoring={"alerts": {"tpu-hbm-near-full": False}}),
    }
    for what, job in unrelated.items():
        assert job["metadata"]["name"] == name, what


def test_turning_the_dashboard_off_keeps_only_the_hpas_metric():
    env = env_of(vllm_job(monitoring={"enabled": False}))
    assert json.loads(env["SMOKE_METRICS"]) == ["vllm:num_requests_waiting"]


def test_the_api_key_comes_from_the_secret_never_the_spec():
    job = vllm_job(api_key=True, api_key_secret=pulumi.Output.secret("sk-very-secret"))
    env = env_of(job)
    assert env["SMOKE_API_KEY"] == {"secretKeyRef": {"name": "hf-secret", "key": "api_key"}}
    assert "sk-very-secret" not in json.dumps(job)


def test_a_served_model_name_in_extra_args_is_what_the_request_names():
    env = env_of(vllm_job(extra_args=["--served-model-name", "qwen", "other"]))
    assert json.loads(env["SMOKE_BODY"])["model"] == "qwen"
    assert flag_value(["--served-model-name=a", "--x"], "--served-model-name") == "a"
    assert flag_value(["--served-model-name"], "--served-model-name") is None


# -- off switch ---------------------------------------------------------------------------------------------


def test_smoke_test_false_declares_no_job_and_no_script():
    for build in (
        lambda: VllmStack("v", {**QWEN, "smoke_test": False}),
        lambda: JetStreamStack(
            "j",
            {
                "cluster": {**CLUSTER, "location": "us-west4-a"},
                "model": "google/gemma-7b-it",
                "hf_token": pulumi.Output.secret("t"),
                "smoke_test": False,
            },
        ),
        lambda: SaxmlStack(
            "s",
            {
                "cluster": {**CLUSTER, "location": "us-central1-a"},
                "model": "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
                "source_ranges": CLIENTS,
                "tpu_generation": "v5e",
                "smoke_test": False,
            },
        ),
    ):
        mocks = capture(build)
        assert mocks.resources  # the stack itself is declared
        assert not [r for r in mocks.resources if "smoke-test" in r.name]


def test_saxml_with_nothing_published_has_nothing_to_ask():
    mocks = capture(
        lambda: SaxmlStack(
            "s",
            {
                "cluster": {**CLUSTER, "location": "us-central1-a"},
                "model": "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
                "source_ranges": CLIENTS,
                "tpu_generation": "v5e",
                "models": [],
            },
        )
    )
    assert not [r for r in mocks.resources if "smoke-test" in r.name]


def test_a_publisher_that_does_not_wait_gives_the_request_the_models_load_time():
    def saxml_job(**overrides) -> dict:
        args = {
            "cluster": {**CLUSTER, "location": "us-central1-a"},
            "model": "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test",
            "source_ranges": CLIENTS,
            "tpu_generation": "v5e",
            **overrides,
        }
        return smoke_job(lambda: SaxmlStack("s", args))

    waits, does_not = saxml_job(), saxml_job(publish_wait_minutes=0)
    assert env_of(waits)["SMOKE_DEADLINE_SECONDS"] == "600"  # the publisher waited for the load
    assert env_of(does_not)["SMOKE_DEADLINE_SECONDS"] == str(60 * 60)  # the dashboard's Saxml startup budget
    assert does_not["spec"]["activeDeadlineSeconds"] == 5 * 60 + 60 * 60 + 240 + 60
    for job in (waits, does_not):
        assert_the_script_speaks_before_the_deadline(job)


def test_a_changed_pod_failure_policy_gives_a_new_name(monkeypatch):
    """The policy is immutable and pulumi-kubernetes does not replace a Job for it: only a new name re-creates."""
    from tpu_stacks.serving import smoke_plan

    test = smoke_plan.SmokeTest("vllm", "ns", "http://s:8000/v1/completions", "{}", "img", "{}", (8000,))
    name = test.name
    monkeypatch.setattr(smoke_plan, "IGNORED_POD_CONDITIONS", ("DisruptionTarget", "ConfigIssue"))
    assert test.name != name


def test_the_server_fingerprint_follows_the_server_not_unset_optional_keys():
    """The Job is named by the server's settings: a changed setting renames it (a new test runs), an optional key
    left unset (a key a later release adds) does not, so upgrading does not re-run every stack's smoke test."""
    from tpu_stacks.serving.smoke_plan import server_fingerprint
    from tpu_stacks.vllm.spec import VllmSpec

    base = VllmSpec(model="meta-llama/Llama-3.1-70B")
    assert base.slo is None and '"slo"' not in server_fingerprint(base)
    assert server_fingerprint(base) == server_fingerprint(VllmSpec(model="meta-llama/Llama-3.1-70B"))
    assert server_fingerprint(base) != server_fingerprint(base.model_copy(update={"max_model_len": 8192}))
    with_slo = VllmSpec.model_validate({"model": "meta-llama/Llama-3.1-70B", "slo": {"outputTokensPerSecond": 100}})
    assert server_fingerprint(with_slo) != server_fingerprint(base)

"""Each verify check answers PASS against the stack's passing synthetic answers and FAIL against its failing ones,
on the stack's real offline plan; a check that applies to none of the fixture stacks is tested on a plan changed
to declare what it checks."""

from __future__ import annotations

import copy

import pytest

from tests.live.support import STACKS, context, planned
from tpu_stacks_live.verdict import Verdict
from tpu_stacks_live.verify.checks import registry
from tpu_stacks_live.verify.plan import StackPlan
from tpu_stacks_live.verify.registry import run_check

ARMOR = "gateway-regional-cloud-armor"


def _stack_of(name: str) -> str | None:
    return next((stack for stack in STACKS if registry()[name].applies(planned(stack))), None)


def test_every_check_but_the_public_gateway_applies_to_a_fixture_stack():
    assert [name for name in registry() if _stack_of(name) is None] == [ARMOR]


@pytest.mark.parametrize("name", [n for n in registry() if n != ARMOR])
@pytest.mark.parametrize("scenario, verdict", [("pass", Verdict.PASS), ("fail", Verdict.FAIL)])
def test_check_answers_its_fixture(name, scenario, verdict):
    stack = _stack_of(name)
    result = run_check(registry()[name], context(planned(stack), scenario))
    assert result.check == name
    assert result.verdict is verdict, result.line()
    assert bool(result.fix) is (verdict is not Verdict.PASS), result.line()


def _public_gateway() -> StackPlan:
    """vllm-gateway's plan as `exposure: public` declares it: a GCPBackendPolicy naming a Cloud Armor policy."""
    plan = copy.deepcopy(planned("vllm-gateway"))
    policy = plan.first("GCPBackendPolicy")
    policy["spec"]["default"]["securityPolicy"] = "vllm-gateway-vllm-gateway-armor"
    return plan


@pytest.mark.parametrize("scenario, verdict", [("pass", Verdict.PASS), ("fail", Verdict.FAIL)])
def test_regional_cloud_armor(scenario, verdict):
    plan = _public_gateway()
    item = registry()[ARMOR]
    assert item.applies(plan) and not item.applies(planned("vllm-gateway"))
    result = run_check(item, context(plan, scenario, "vllm-gateway"))
    assert result.verdict is verdict, result.line()


def test_an_unreadable_answer_is_unknown_with_the_readers_fix():
    ctx = context(planned("vllm-405b"), "pass")
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayservices.ray.io"
    ctx.cluster.answers[path] = {"_unreadable": "GET answered 403", "fix": "give your account read access (view)"}
    result = run_check(registry()["kuberay-crd-serves-authOptions"], ctx)
    assert (result.verdict, result.fix) == (Verdict.UNKNOWN, "give your account read access (view)")


def test_nothing_deployed_is_unknown_not_fail():
    ctx = context(planned("vllm-gateway"), "pass")
    ctx.cluster.answers = {k: v for k, v in ctx.cluster.answers.items() if "/jobs/" not in k}
    result = run_check(registry()["gateway-smoke-through-the-address"], ctx)
    assert result.verdict is Verdict.UNKNOWN and "pulumi up" in result.fix


def test_drift_without_the_pulumi_cli_is_unknown_with_the_command():
    ctx = context(planned("raytrain"), "pass")
    ctx.pulumi.answers = {}
    result = run_check(registry()["drift-none"], ctx)
    assert result.verdict is Verdict.UNKNOWN
    assert "pulumi preview --expect-no-changes --diff --stack raytrain" in result.fix


def test_applicability_follows_the_plan_not_the_stack_name():
    plan = copy.deepcopy(planned("raytrain"))
    assert not registry()["hpa-metrics-read"].applies(plan)
    plan.objects.append(copy.deepcopy(planned("vllm-gateway").first("HorizontalPodAutoscaler")))
    assert registry()["hpa-metrics-read"].applies(plan)


@pytest.mark.parametrize(
    "name, namespace, target, expected",
    [
        ("gkegw1-qm6k-secure-app-secure-demo-8080-wqi4f7l2fh2l", "secure-app", "secure-demo", True),
        (
            "gkegw1-jgyx-kalchem-access-advisor-middleware-8000-78qnvyiusmha",
            "kalchemy",
            "access-advisor-middleware",
            True,
        ),
        ("gkegw1-abcd-vllm-vllm-epp-9002-xyz", "vllm", "vllm-inference-pool", False),
        ("k8s1-vllm-vllm-inference-pool", "vllm", "vllm-inference-pool", False),
    ],
)
def test_backend_services_are_told_apart_by_their_truncated_names(name, namespace, target, expected):
    from tpu_stacks_live.verify.checks.gateway import made_for

    assert made_for({"name": name}, namespace, target) is expected


def test_a_backend_service_found_by_no_name_is_unknown():
    ctx = context(planned("vllm-gateway"), "pass")
    key = next(k for k in ctx.google.compute_answers if k.startswith("regionBackendServices.list"))
    ctx.google.compute_answers[key] = []
    result = run_check(registry()["gateway-backend-health"], ctx)
    assert result.verdict is Verdict.UNKNOWN and "gcloud compute backend-services list" in result.fix


def test_the_load_balancers_health_check_rule_is_not_the_clients_rule():
    ctx = context(planned("vllm-405b"), "pass")
    rule = ctx.google.compute_answers["firewalls.list"][0]
    probe = {**rule, "name": "k8s2-hc", "sourceRanges": ["35.191.0.0/16", "130.211.0.0/22"]}
    ctx.google.compute_answers["firewalls.list"] = [rule, probe]
    assert run_check(registry()["lb-source-ranges"], ctx).verdict is Verdict.PASS


def test_a_ray_job_without_status_yet_is_unknown_until_it_stalls():
    from datetime import UTC, datetime

    ctx = context(planned("raytrain"), "fail")
    path = next(k for k in ctx.cluster.answers if "/rayjobs/" in k)
    fresh = ctx.cluster.answers[path]
    fresh["metadata"]["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    result = run_check(registry()["kuberay-operator-path"], ctx)
    assert result.verdict is Verdict.UNKNOWN, result.line()


def test_a_preview_that_fails_for_another_reason_says_nothing_on_drift():
    """Only the CLI's own "changes were proposed" is drift; a login, a lock or a program error is UNKNOWN."""
    ctx = context(planned("raytrain"), "pass")
    ctx.pulumi.answers = {"preview": {"returncode": 255, "output": "error: getting stack: no credentials\n"}}
    result = run_check(registry()["drift-none"], ctx)
    assert result.verdict is Verdict.UNKNOWN and "error: getting stack: no credentials" in result.detail
    ctx.pulumi.answers = {
        "preview": {
            "returncode": 255,
            "output": "  ~ Dashboard d update\nerror: no changes were expected but changes were proposed\n",
        }  # fmt: skip
    }
    assert run_check(registry()["drift-none"], ctx).verdict is Verdict.FAIL
    ctx.pulumi.answers["preview"]["output"] = "error: no changes were expected for preview but changes were proposed"
    assert run_check(registry()["drift-none"], ctx).verdict is Verdict.FAIL

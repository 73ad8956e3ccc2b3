"""The Inference Gateway CRDs ship with the preview package: InferencePool and InferenceObjective (gateway-api-
inference-extension), Gateway and HTTPRoute (Gateway API, standard channel) and GKE's HealthCheckPolicy and
GCPBackendPolicy. Each validates a well-formed object in upstream's shape and refuses a misspelled field; the
vendored files carry the release the catalogue pins. InferenceObjective's CRD ships with the library (stacks
declare it; tpu_stacks/k8s/crds), and the planner reads it from there."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tpu_stacks.catalog.inference_gateway import (
    GATEWAY_API_VERSION,
    INFERENCE_EXTENSION_VERSION,
    INFERENCE_OBJECTIVE_API_VERSION,
    INFERENCE_POOL_API_VERSION,
)
from tpu_stacks.k8s.crd_files import INFERENCE_OBJECTIVE_CRD, crd_document
from tpu_stacks.vllm.gateway import health_check_policy, picker_health_check_policy
from tpu_stacks_preview.schema import VENDORED_CRDS, validate_objects

META = {"name": "vllm", "namespace": "serving"}
POOL_REF = {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "vllm"}
# Shapes from upstream's manifests: gateway-api-inference-extension v1.5.0 config/manifests/inferencepool-resources.yaml
# and config/charts/inferencepool/templates/{inferencepool,gke}.yaml; GKE's Inference Gateway guide for the route.
INFERENCE_POOL = {
    "apiVersion": INFERENCE_POOL_API_VERSION,
    "kind": "InferencePool",
    "metadata": META,
    "spec": {
        "selector": {"matchLabels": {"app": "vllm"}},
        "targetPorts": [{"number": 8000}],
        "endpointPickerRef": {"name": "vllm-epp", "port": {"number": 9002}, "failureMode": "FailClose"},
    },
}
INFERENCE_OBJECTIVE = {
    "apiVersion": INFERENCE_OBJECTIVE_API_VERSION,
    "kind": "InferenceObjective",
    "metadata": META,
    "spec": {"priority": 10, "poolRef": {"name": "vllm"}},
}
GATEWAY = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "Gateway",
    "metadata": META,
    "spec": {"gatewayClassName": "gke-l7-rilb", "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
}
HTTP_ROUTE = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "HTTPRoute",
    "metadata": META,
    "spec": {
        "parentRefs": [{"name": "vllm"}],
        "rules": [
            {
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "vllm"}],
            }
        ],
    },
}
HEALTH_CHECK_POLICY = {
    "apiVersion": "networking.gke.io/v1",
    "kind": "HealthCheckPolicy",
    "metadata": META,
    "spec": {
        "targetRef": POOL_REF,
        "default": {
            "timeoutSec": 2,
            "checkIntervalSec": 2,
            "config": {"type": "HTTP", "httpHealthCheck": {"requestPath": "/health", "port": 8000}},
        },
    },
}
BACKEND_POLICY = {
    "apiVersion": "networking.gke.io/v1",
    "kind": "GCPBackendPolicy",
    "metadata": META,
    "spec": {
        "targetRef": POOL_REF,
        "default": {"timeoutSec": 300, "logging": {"enabled": True}, "securityPolicy": "vllm-allow-ranges"},
    },
}


def rename(path: list[str], old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def apply(obj: dict[str, Any]) -> None:
        node = obj
        for step in path:
            node = node[step] if isinstance(node, dict) else node[int(step)]
        node[new] = node.pop(old)

    return apply


CASES = [
    (INFERENCE_POOL, rename(["spec"], "targetPorts", "targetPort"), "spec"),
    (INFERENCE_OBJECTIVE, rename(["spec", "poolRef"], "name", "nmae"), "spec/poolRef"),
    (GATEWAY, rename(["spec"], "gatewayClassName", "gatewayClass"), "spec"),
    (HTTP_ROUTE, rename(["spec", "rules", "0", "backendRefs", "0"], "kind", "kidn"), "spec/rules/0/backendRefs/0"),
    (HEALTH_CHECK_POLICY, rename(["spec", "default"], "checkIntervalSec", "checkInterval"), "spec/default"),
    (BACKEND_POLICY, rename(["spec", "default"], "securityPolicy", "securityPolicyName"), "spec/default"),
]


@pytest.mark.parametrize(("good", "misspell", "where"), CASES, ids=[c[0]["kind"] for c in CASES])
def test_a_well_formed_object_validates_and_a_misspelled_field_does_not(
    monkeypatch: pytest.MonkeyPatch, good: dict[str, Any], misspell: Callable[[dict[str, Any]], None], where: str
) -> None:
    monkeypatch.delenv("TPU_STACKS_CRDS", raising=False)
    report = validate_objects([good])
    assert report.problems == [] and report.validated == 1
    bad = copy.deepcopy(good)
    misspell(bad)
    problems = validate_objects([bad]).problems
    assert where in [p.path for p in problems], problems
    assert any("was unexpected" in p.message for p in problems if p.path == where)


def test_the_schemas_refuse_values_outside_what_upstream_and_gke_allow() -> None:
    """Not only field names: the vendored rules on values hold too (enums, ranges, required fields)."""
    bad_mode = copy.deepcopy(INFERENCE_POOL)
    bad_mode["spec"]["endpointPickerRef"]["failureMode"] = "FailSilently"
    no_selector = copy.deepcopy(INFERENCE_POOL)
    del no_selector["spec"]["selector"]
    slow_check = copy.deepcopy(HEALTH_CHECK_POLICY)
    slow_check["spec"]["default"]["checkIntervalSec"] = 301
    no_target = copy.deepcopy(BACKEND_POLICY)
    del no_target["spec"]["targetRef"]
    for obj in (bad_mode, no_selector, slow_check, no_target):
        assert validate_objects([obj]).problems, obj


def _bundle_version(file: str, annotation: str) -> str:
    crd = yaml.safe_load((VENDORED_CRDS / file).read_text())
    return crd["metadata"]["annotations"][annotation]


def test_the_vendored_crds_are_the_releases_the_catalogue_pins() -> None:
    """One version: the picker image's tag (catalog.inference_gateway) is the release the CRDs come from."""
    pool = _bundle_version(
        "inference.networking.k8s.io_inferencepools.yaml", "inference.networking.k8s.io/bundle-version"
    )
    objective = crd_document(INFERENCE_OBJECTIVE_CRD)["metadata"][
        "annotations"
    ]  # the library ships it: stacks declare it
    assert pool == objective["inference.networking.k8s.io/bundle-version"] == INFERENCE_EXTENSION_VERSION
    for file in ("gateway.networking.k8s.io_gateways.yaml", "gateway.networking.k8s.io_httproutes.yaml"):
        assert _bundle_version(file, "gateway.networking.k8s.io/bundle-version") == GATEWAY_API_VERSION
        assert _bundle_version(file, "gateway.networking.k8s.io/channel") == "standard"


def _health_check_port_rules() -> list[str]:
    crd = yaml.safe_load((VENDORED_CRDS / "networking.gke.io_healthcheckpolicies.yaml").read_text())
    config = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["default"]
    http = config["properties"]["config"]["properties"]["httpHealthCheck"]
    return [" ".join(rule["rule"].split()) for rule in http["x-kubernetes-validations"]]


def _port_rules_hold(check: dict[str, Any]) -> bool:
    """GKE's three CEL rules on a health check's port, as the vendored CRD states them (the test below pins the
    text): the offline validator checks the OpenAPI schema, not CEL, so this is the part it cannot see."""
    spec = check.get("portSpecification")
    fixed = spec != "USE_FIXED_PORT" or ("port" in check and "portName" not in check)
    named = spec != "USE_NAMED_PORT" or ("port" not in check and "portName" in check)
    serving = not (spec == "USE_SERVING_PORT" or spec is None) or ("port" not in check and "portName" not in check)
    return fixed and named and serving


def test_our_health_check_port_satisfies_gkes_cel_rules_that_the_charts_does_not() -> None:
    assert _health_check_port_rules() == [
        "self.portSpecification == 'USE_FIXED_PORT' ? has(self.port) && !has(self.portName) : true",
        "self.portSpecification == 'USE_NAMED_PORT' ? !has(self.port) && has(self.portName) : true",
        "self.portSpecification == 'USE_SERVING_PORT' || !has(self.portSpecification) ? !has(self.port) && "
        "!has(self.portName) : true",
    ]
    ours = health_check_policy(8000)["default"]["config"]["httpHealthCheck"]
    assert _port_rules_hold(ours)
    chart = HEALTH_CHECK_POLICY["spec"]["default"]["config"]["httpHealthCheck"]  # a port, no portSpecification
    assert not _port_rules_hold(chart)


def _config_rules(crd: dict[str, Any], block: str | None = None) -> list[str]:
    config = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["default"]
    node = config["properties"]["config"]
    if block is not None:
        node = node["properties"][block]
    return [" ".join(rule["rule"].split()) for rule in node["x-kubernetes-validations"]]


def test_the_pickers_grpc_health_check_policy_is_one_the_vendored_crd_and_its_cel_rules_accept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The HealthCheckPolicy pinned on the picker's Service: a Service target (the CRD's targetRef takes any group
    and kind), type GRPC with its grpcHealthCheck block, a fixed port; the schema validates it and GKE's CEL rules,
    read from the vendored file, hold for it."""
    monkeypatch.delenv("TPU_STACKS_CRDS", raising=False)
    spec = picker_health_check_policy()
    obj = {"apiVersion": "networking.gke.io/v1", "kind": "HealthCheckPolicy", "metadata": META, "spec": spec}
    report = validate_objects([obj])
    assert report.problems == [] and report.validated == 1
    crd = yaml.safe_load((VENDORED_CRDS / "networking.gke.io_healthcheckpolicies.yaml").read_text())
    assert "self.type == 'GRPC' ? has(self.grpcHealthCheck) : true" in _config_rules(crd)
    assert _config_rules(crd, "grpcHealthCheck") == _health_check_port_rules()  # the same three port rules
    config = spec["default"]["config"]
    assert config["type"] == "GRPC" and "grpcHealthCheck" in config and _port_rules_hold(config["grpcHealthCheck"])
    assert spec["targetRef"]["kind"] == "Service" and spec["targetRef"]["group"] == ""
    bad = copy.deepcopy(obj)
    bad["spec"]["default"]["config"]["grpcHealthCheck"]["port"] = 70000
    assert validate_objects([bad]).problems  # the schema's own range, 1-65535

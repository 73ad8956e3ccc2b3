"""The capturing engine records what a real engine would receive, in both modes."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from pulumi.runtime import resource as runtime_resource
from pulumi.runtime.proto import analyzer_pb2, resource_pb2

from tpu_stacks_preview import engine as engine_module
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.config import secret_placeholder
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.mocks import CLUSTER_ENDPOINT
from tpu_stacks_preview.monitor import CaptureMonitor

from .conftest import ERRORS, RAW

STACK = "urn:pulumi:dev::raw-fixture::"


def _one(capture: Capture, type_token: str, name: str):
    found = [r for r in capture.resources if r.type == type_token and r.name == name]
    assert len(found) == 1, [r.urn for r in capture.resources]
    return found[0]


def test_urns_carry_the_parent_type_chain_without_the_stack(raw_up: Capture) -> None:
    deployment = _one(raw_up, "kubernetes:apps/v1:Deployment", "llm")
    assert deployment.urn == STACK + "fixture:serving:Serving$kubernetes:apps/v1:Deployment::llm"
    assert deployment.parent == STACK + "fixture:serving:Serving::llm"
    bucket = _one(raw_up, "gcp:storage/bucket:Bucket", "models")
    assert bucket.urn == STACK + "gcp:storage/bucket:Bucket::models"
    assert bucket.parent == STACK + "pulumi:pulumi:Stack::raw-fixture-dev"


def test_every_kubernetes_object_uses_the_explicit_provider(raw_up: Capture) -> None:
    gke = _one(raw_up, "pulumi:providers:kubernetes", "gke")
    objects = [r for r in raw_up.resources if r.type.startswith("kubernetes:")]
    assert len(objects) == 4
    # Deployment/Service inherit it from the component's providers=[...]; the rest pass provider=.
    assert {r.provider for r in objects} == {f"{gke.urn}::gke-id"}


def test_preview_leaves_computed_values_unknown(raw_preview: Capture) -> None:
    deployment = _one(raw_preview, "kubernetes:apps/v1:Deployment", "llm")
    env = deployment.inputs["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "BUCKET", "value": "(known after apply)"}]
    assert deployment.unknown_inputs
    assert raw_preview.stack_outputs["endpoint"] == "(known after apply)"
    assert deployment.provider.endswith("::04da6b54-80e4-46f7-96ec-b56ff0331ba9")  # provider id unknown too


def test_up_fills_computed_values_so_apply_code_runs(raw_up: Capture) -> None:
    assert raw_up.stack_outputs["endpoint"] == CLUSTER_ENDPOINT
    kubeconfig = json.loads(_one(raw_up, "pulumi:providers:kubernetes", "gke").inputs["kubeconfig"])
    assert kubeconfig["clusters"][0]["cluster"]["server"] == f"https://{CLUSTER_ENDPOINT}"
    deployment = _one(raw_up, "kubernetes:apps/v1:Deployment", "llm")
    assert not deployment.unknown_inputs
    assert deployment.inputs["spec"]["replicas"] == 2  # from stack config, an int again
    assert (
        raw_up.stack_outputs["bucketUrl"]
        == f"gs://{deployment.inputs['spec']['template']['spec']['containers'][0]['env'][0]['value']}"
    )


def test_secret_config_stays_secret(raw_preview: Capture, raw_up: Capture) -> None:
    for capture in (raw_preview, raw_up):
        secret = _one(capture, "kubernetes:core/v1:Secret", "db")
        assert secret.secret_inputs == ["stringData"]
        assert secret.inputs["stringData"] == "[secret]"
        assert capture.stack_outputs["kubeconfig"] == "[secret]"
        dumped = json.dumps([r.inputs for r in capture.resources] + [capture.stack_outputs])
        assert secret_placeholder("raw-fixture:dbPassword") not in dumped


def test_stack_transform_runs_for_later_resources(raw_up: Capture) -> None:
    assert _one(raw_up, "gcp:storage/bucket:Bucket", "models").inputs["labels"] == {"transformed": "yes"}
    # registered at import time, before the program registered the transform
    assert "labels" not in _one(raw_up, "gcp:storage/bucket:Bucket", "import-time-logs").inputs


def test_a_components_transforms_reach_its_children(raw_up: Capture) -> None:
    for type_token in ("kubernetes:apps/v1:Deployment", "kubernetes:core/v1:Service"):
        assert _one(raw_up, type_token, "llm").inputs["metadata"]["annotations"] == {"fixture/owner": "serving"}
    assert (
        "annotations" not in _one(raw_up, "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet", "pretrain").inputs["metadata"]
    )


def test_import_time_resources_appear_in_every_run(raw_preview: Capture, raw_up: Capture) -> None:
    # Both captures come from one process: without evicting program modules the second run
    # would reuse the cached module and lose this bucket.
    for capture in (raw_preview, raw_up):
        _one(capture, "gcp:storage/bucket:Bucket", "import-time-logs")


def test_component_outputs_and_dependencies_are_recorded(raw_up: Capture) -> None:
    assert _one(raw_up, "fixture:serving:Serving", "llm").outputs == {"service": "llm"}
    pool = _one(raw_up, "gcp:container/nodePool:NodePool", "v5e")
    cluster = _one(raw_up, "gcp:container/cluster:Cluster", "tpu")
    assert cluster.urn in pool.dependencies
    assert pool.property_dependencies["cluster"] == [cluster.urn]


def test_duplicate_urn_is_rejected() -> None:
    capture = run_program(ERRORS, "duplicate", preview=True)
    assert capture.error is not None and capture.error.kind == "program"
    assert capture.error.message == (
        "Duplicate resource URN 'urn:pulumi:duplicate::errors-fixture::gcp:storage/bucket:Bucket::models'; "
        "try giving it a unique name"
    )


def test_unmocked_invoke_fails_naming_its_token() -> None:
    capture = run_program(ERRORS, "invoke", preview=True)
    assert capture.error is not None
    assert "gcp:compute/getZones:getZones" in capture.error.message
    assert [i.token for i in capture.invokes] == ["gcp:compute/getZones:getZones"]


def test_user_error_is_reported_as_its_one_line() -> None:
    capture = run_program(ERRORS, "user-error", preview=True)
    assert capture.error is not None and capture.error.kind == "user"
    assert capture.error.message == "tpu.chips: 12 is not a valid v5e slice size; use one of 1, 4, 8, 16"


@pytest.mark.parametrize(("preview", "fails"), [(True, False), (False, True)])
def test_apply_bodies_run_only_when_values_are_known(preview: bool, fails: bool) -> None:
    capture = run_program(ERRORS, "apply-error", preview=preview)
    assert (capture.error is not None) == fails
    if fails:
        assert capture.error.message == "ZeroDivisionError: division by zero"


def test_runs_skip_the_source_positions_only_the_engine_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK computes where each resource was declared for RegisterResourceRequest alone (ledger:
    pulumi.runtime.stack-trace-sent, pulumi.runtime.source-position-sent), and no analyzer request has a field for it: a run sends
    none, and the SDK's own function is back after it, after a failed run too."""
    assert "sourcePosition" in resource_pb2.RegisterResourceRequest.DESCRIPTOR.fields_by_name
    for request in (analyzer_pb2.AnalyzeRequest, analyzer_pb2.AnalyzerResource):
        assert not {"sourcePosition", "stackTrace"} & set(request.DESCRIPTOR.fields_by_name)
    computed = runtime_resource._get_stack_trace
    sent: list[tuple[int, bool]] = []
    register = CaptureMonitor.RegisterResource

    def recording(self: CaptureMonitor, request: resource_pb2.RegisterResourceRequest) -> object:
        sent.append((len(request.stackTrace.frames), request.HasField("sourcePosition")))
        return register(self, request)

    monkeypatch.setattr(CaptureMonitor, "RegisterResource", recording)
    assert run_program(RAW, "dev", preview=True).error is None
    assert len(sent) > 5 and set(sent) == {(0, False)}
    assert runtime_resource._get_stack_trace is computed
    assert run_program(ERRORS, "apply-error", preview=False).error is not None  # the program's failure: data
    assert runtime_resource._get_stack_trace is computed

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the engine's own crash")

    monkeypatch.setattr(engine_module, "threading", SimpleNamespace(Thread=broken))
    with pytest.raises(RuntimeError, match="own crash"):  # raised inside the run's block (an interrupt would be)
        run_program(RAW, "dev", preview=True)
    assert runtime_resource._get_stack_trace is computed

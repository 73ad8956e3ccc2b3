"""The policy pack sees what `pulumi preview --policy-pack` would show it, over either transport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import empty_pb2

from tpu_stacks.errors import UserError
from tpu_stacks_preview.analyze_requests import analyze_requests
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.policy import (
    PolicyError,
    PolicyResult,
    load_pack_servicer,
    run_policy_pack,
)
from tpu_stacks_preview.wire import SECRET_SIG, SIG_KEY, UNKNOWN

from .conftest import PACK

JOBSET = "urn:pulumi:dev::raw-fixture::kubernetes:jobset.x-k8s.io/v1alpha2:JobSet::pretrain"


@pytest.fixture(scope="module")
def over_grpc(raw_preview: Capture) -> PolicyResult:
    return run_policy_pack(PACK, raw_preview, transport="subprocess")


def _summary(result: PolicyResult) -> list[tuple[str, str, str | None]]:
    return [(v.policy, v.enforcement, v.urn) for v in result.violations]


def test_violations_are_attributed_and_leveled(over_grpc: PolicyResult) -> None:
    assert over_grpc.pack == "offline-fixture-pack"
    assert over_grpc.version == "0.1.0"  # PulumiPolicy.yaml's version wins, as in the CLI
    assert _summary(over_grpc) == [
        ("bucket-versioning", "advisory", "urn:pulumi:dev::raw-fixture::gcp:storage/bucket:Bucket::import-time-logs"),
        ("bucket-versioning", "advisory", "urn:pulumi:dev::raw-fixture::gcp:storage/bucket:Bucket::models"),
        ("no-latest-image", "mandatory", JOBSET),  # reported with urn "": the analysed resource's
    ]
    assert "tpu:latest" in over_grpc.mandatory[0].message


def test_in_process_matches_the_subprocess(over_grpc: PolicyResult, raw_preview: Capture) -> None:
    assert run_policy_pack(PACK, raw_preview, transport="in-process") == over_grpc


def test_initial_config_reaches_the_pack_through_configure(raw_preview: Capture, over_grpc: PolicyResult) -> None:
    # The pack's node budget is 1 in code and 8 in its initial config; the fixture asks for 4 nodes.
    # Without the Configure replay the budget policy fires, with it (the driver above) it does not.
    servicer = load_pack_servicer(PACK)
    servicer.GetAnalyzerInfo(empty_pb2.Empty(), None)
    _, stack_request = analyze_requests(raw_preview)
    unconfigured = servicer.AnalyzeStack(stack_request, None).diagnostics
    assert [d.policyName for d in unconfigured] == ["node-budget"]
    assert "4 nodes, budget is 1" in unconfigured[0].message
    assert "node-budget" not in {v.policy for v in over_grpc.violations}


def test_user_config_file_layers_over_initial_config(raw_preview: Capture, tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"node-budget": {"maxNodes": 2}, "bucket-versioning": "disabled"}))
    results = [
        run_policy_pack(PACK, raw_preview, config_file=config, transport=transport)
        for transport in ("subprocess", "in-process")
    ]
    assert results[0] == results[1]
    assert _summary(results[0]) == [("no-latest-image", "mandatory", JOBSET), ("node-budget", "mandatory", None)]
    assert "4 nodes, budget is 2" in results[0].violations[1].message


def test_config_that_breaks_the_schema_is_the_users_error(raw_preview: Capture, tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"node-budget": {"maxNodes": 0}}))
    with pytest.raises(UserError, match="node-budget: 0 is less than the minimum of 1"):
        run_policy_pack(PACK, raw_preview, config_file=config, transport="in-process")


def test_a_pack_that_dies_before_serving_is_reported(raw_preview: Capture, tmp_path: Path) -> None:
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text("raise RuntimeError('pack is broken')\n")
    with pytest.raises(PolicyError, match="RuntimeError: pack is broken"):
        run_policy_pack(tmp_path, raw_preview, transport="subprocess")


def test_requests_carry_unknowns_secrets_and_default_providers(raw_preview: Capture) -> None:
    requests, stack_request = analyze_requests(raw_preview)
    by_urn = {r.urn: r for r in requests}
    bucket = by_urn["urn:pulumi:dev::raw-fixture::gcp:storage/bucket:Bucket::models"]
    assert bucket.provider.urn == "urn:pulumi:dev::raw-fixture::pulumi:providers:gcp::default_10_2_0"
    assert bucket.provider.properties["project"] == "offline-proj"  # provider config from the stack
    secret = by_urn["urn:pulumi:dev::raw-fixture::kubernetes:core/v1:Secret::db"]
    assert secret.provider.type == "pulumi:providers:kubernetes" and secret.provider.name == "gke"
    assert secret.properties["stringData"][SIG_KEY] == SECRET_SIG  # still tagged secret for the pack
    deployment = by_urn["urn:pulumi:dev::raw-fixture::fixture:serving:Serving$kubernetes:apps/v1:Deployment::llm"]
    env = deployment.properties["spec"]["template"]["spec"]["containers"][0]["env"][0]
    assert env["value"] == UNKNOWN  # the bucket name is not known during preview
    assert len(stack_request.resources) == len(raw_preview.resources)

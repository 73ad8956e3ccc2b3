"""The pack judges raw resources, not only ours: a program written directly with pulumi-gcp and
pulumi-kubernetes, planned with `tpu-stacks plan --cwd DIR --policy-pack policies`."""

import json
from pathlib import Path

from tests.cli_run import tpu_stacks

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "preview" / "fixtures" / "raw"


def test_a_raw_program_gets_the_checks_that_need_no_model(tmp_path):
    out = tmp_path / "plan.json"
    result = tpu_stacks(
        "plan",
        "--cwd",
        str(RAW),
        "--stack",
        "dev",
        "--policy-pack",
        str(ROOT / "policies"),
        "--json",
        str(out),
    )
    assert result.returncode == 1  # mandatory violations fail the plan
    assert "mandatory policy violation" in result.stderr
    violations = json.loads(out.read_text())["policy"]["violations"]
    found = {(v["policy"], v["enforcement"]) for v in violations}
    assert ("bucket-hardened", "mandatory") in found
    assert ("workload-identity-enabled", "mandatory") in found
    assert ("tpu-workload-matches-pool", "mandatory") in found
    assert ("pinned-images", "advisory") in found
    for violation in violations:
        assert violation["urn"] and violation["urn"].startswith("urn:pulumi:dev::"), violation
    # Its vLLM server (image vllm-tpu) is started without arguments: no model to size, said as an advisory.
    assert not any(v["policy"] == "tpu-model-fits-slice" for v in violations)
    assert ("tpu-model-sizable", "advisory") in found

"""`slo:` in a stack file, run as users run it: the whole program offline (`up` semantics under mocks) sizes
the HPA and the TPU pool from the target and annotates the Deployment, the policy pack passes it; an
unreachable latency limit is one line and exit 2 from `tpu-stacks plan`, before anything is declared."""

from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tpu_stacks.catalog.throughput_measurements import SHAREGPT_INPUT_TOKENS, SHAREGPT_OUTPUT_TOKENS
from tpu_stacks.objects import annotations as keys
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.policy import run_policy_pack

ROOT = Path(__file__).resolve().parents[2]
SLO_POLICIES = ("tpu-slo-capacity", "tpu-slo-capacity-modelled")


def stack_file(project: Path, name: str, shipped: str, section: str, **changes) -> str:
    """A shipped stack file with `changes` merged into its workload section (None removes a key)."""
    document = yaml.safe_load((ROOT / f"Pulumi.{shipped}.yaml").read_text())
    body = document["config"][f"tpu-stacks:{section}"]
    for key, value in changes.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(document))
    return name


def only(capture, type_token: str):
    (found,) = capture.of_type(type_token)
    return found.inputs


def serving(capture):
    """The model server's Deployment: the one with the sizing contract's annotations."""
    (found,) = [
        r.inputs
        for r in capture.of_type("kubernetes:apps/v1:Deployment")
        if keys.MODEL in (r.inputs["metadata"].get("annotations") or {})
    ]
    return found


def test_vllm_stack_with_slo_sizes_hpa_and_pool_and_passes_the_pack(project):
    slo = {"outputTokensPerSecond": 4000, "ntpotMs": 50, "ttftMs": 2000}
    # The shipped file sets maxNumSeqs and the HPA target, which would win: this stack leaves them to the slo.
    name = stack_file(
        project, "slo-vllm", "vllm", "vllm", replicas={"min": 1}, maxNumSeqs=None, autoscaling=None, slo=slo
    )
    capture = run_program(project, name, preview=False)
    assert capture.ok, capture.error
    deployment = serving(capture)
    notes = deployment["metadata"]["annotations"]
    need = int(notes[keys.SLO_REPLICAS])
    assert need > 2  # the shipped maximum was 2: the target moved it
    hpa = only(capture, "kubernetes:autoscaling/v2:HorizontalPodAutoscaler")["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, need)
    # The latency limits cap the engine's batch and give the HPA a queue length to scale on (docs/vllm.md).
    (seqs,) = [a for a in deployment["spec"]["template"]["spec"]["containers"][0]["args"] if "--max-num-seqs" in a]
    assert int(seqs.split("=")[1]) < 128 and hpa["metrics"][0]["pods"]["target"]["averageValue"] != "10"
    pool = next(r.inputs for r in capture.of_type("gcp:container/nodePool:NodePool") if "vllm-pool" in r.name)
    assert pool["autoscaling"]["maxNodeCount"] == need
    assert notes[keys.SLO_OUTPUT_TOKENS_PER_SECOND] == "4000" and notes[keys.SLO_BASIS] in ("measured", "model")
    result = run_policy_pack(ROOT / "policies", capture, transport="in-process")
    assert [v for v in result.violations if v.policy in SLO_POLICIES] == []
    assert result.mandatory == []


def test_jetstream_stack_with_slo_sets_the_fixed_replicas(project):
    slo = {"outputTokensPerSecond": 9000, "inputTokens": SHAREGPT_INPUT_TOKENS, "outputTokens": SHAREGPT_OUTPUT_TOKENS}
    name = stack_file(project, "slo-jetstream", "jetstream-gemma", "jetstream", replicas=None, batchSize=96, slo=slo)
    capture = run_program(project, name, preview=False)
    assert capture.ok, capture.error
    deployment = serving(capture)
    need = int(deployment["metadata"]["annotations"][keys.SLO_REPLICAS])
    assert need > 2 and deployment["spec"]["replicas"] == need
    pool = next(r.inputs for r in capture.of_type("gcp:container/nodePool:NodePool") if "tpu-nodepool" in r.name)
    assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": need}  # up to a node per replica, from 0
    # The published gemma-7b row (batch 96) ran a 2024 JetStream-PyTorch build, not the pinned image: modelled.
    assert deployment["metadata"]["annotations"][keys.SLO_BASIS] == "model"
    result = run_policy_pack(ROOT / "policies", capture, transport="in-process")
    assert [v for v in result.violations if v.policy in SLO_POLICIES] == []
    assert result.mandatory == []  # the source annotation (a URL with a commit) is no secret to the pack


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        (
            {"slo": {"outputTokensPerSecond": 4000, "ntpotMs": 2}},
            "tpu-stacks:vllm.slo.ntpotMs: 2.0 cannot be met by one replica of v6e 2x4 at any load",
        ),
        (
            {"slo": {"outputTokensPerSecond": 4000}, "replicas": {"min": 1, "max": 2}},
            "tpu-stacks:vllm.replicas.max: 2 replicas carry ",
        ),
    ],
)
def test_an_unmeetable_slo_is_one_line_from_the_cli(project, changes, line):
    name = stack_file(project, "slo-bad", "vllm", "vllm", **changes)
    result = tpu_stacks("plan", "--cwd", str(project), "--stack", name)
    assert result.returncode == 2, result.stderr
    (printed,) = [text for text in result.stderr.splitlines() if text.strip()]
    assert line in printed and "Traceback" not in result.stderr

"""`size` and a stack with the same `slo` go through one code path (traffic.size_for_traffic) and choose the same
slice and replicas: the issue's case, Llama 3.1 8B at 3,000 output tokens/s within NTPOT 40 ms, where they
used to disagree (v6e 2x2 x1 from `size`, 1x1 x4 from the stack)."""

import json
import shlex

import pytest

from tests.clients import CLIENTS
from tpu_stacks.cli.main import main
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.inputs.validation import parse_section
from tpu_stacks.slo.plan import size_command, target_of
from tpu_stacks.vllm.plan import _engine_settings, plan_vllm
from tpu_stacks.vllm.spec import VllmSpec

LLAMA_8B = "meta-llama/Llama-3.1-8B"
SLO = {"outputTokensPerSecond": 3000, "ntpotMs": 40}


def _size_answer(command: str, generation: str, capsys) -> dict:
    """Run the `size` command a stack prints (its refusals and `plan`'s hint carry it), narrowed to the stack's
    generation, and return its JSON choice."""
    argv = shlex.split(command)
    assert argv[:2] == ["tpu-stacks", "size"]
    assert main([*argv[1:], "--tpu", generation, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["choice"]


@pytest.mark.parametrize(
    "section",
    [
        {},  # the spec's defaults
        # settings `size` models otherwise by default: each must reach the command, or its answer differs
        {"maxModelLen": 2048, "maxNumSeqs": 8, "maxNumBatchedTokens": 256},
    ],
    ids=["defaults", "own-settings"],
)
def test_the_size_command_a_stack_prints_chooses_its_slice_and_replicas(section, capsys):
    spec = parse_section(VllmSpec, {"model": LLAMA_8B, "sourceRanges": CLIENTS, "slo": SLO, **section}, "vllm")
    plan = plan_vllm(spec, ClusterSpec(project="proj", location="us-central1-b"), True, False)
    settings = _engine_settings(spec, plan.request)  # what the plan gave the traffic model
    command = size_command(plan.request.model, target_of(spec.slo), settings)
    choice = _size_answer(command, spec.tpu_generation, capsys)
    shape = plan.verdict.shape
    assert (choice["generation"], choice["topology"], choice["machine_type"]) == (
        shape.generation,
        shape.topology,
        shape.machine_type,
    )
    assert choice["replicas"] == plan.slo.replicas == plan.spec.replicas.max
    assert choice["per_replica"]["output_tokens_per_second"] == round(plan.slo.replica_output_tokens_per_second, 1)


def test_a_topology_the_user_sets_is_kept_and_its_replicas_follow():
    section = {"model": LLAMA_8B, "sourceRanges": CLIENTS, "slo": SLO, "topology": "1x1"}
    plan = plan_vllm(
        parse_section(VllmSpec, section, "vllm"), ClusterSpec(project="p", location="us-central1-b"), True, False
    )
    assert plan.verdict.shape.topology == "1x1" and plan.slo.replicas >= 1


def test_plan_prints_the_slos_choice_with_ttft_p50_and_p99():
    from tpu_stacks import first_up
    from tpu_stacks_preview.report import _slo_line

    section = {"model": LLAMA_8B, "sourceRanges": CLIENTS, "slo": SLO}
    plan = plan_vllm(
        parse_section(VllmSpec, section, "vllm"), ClusterSpec(project="p", location="us-central1-b"), True, False
    )
    shape = plan.verdict.shape
    summary = first_up.slo_summary(plan.slo, shape.generation, shape.chips)
    line = _slo_line(summary, {"generation": shape.generation, "topology": shape.topology})
    assert line.startswith(f"slo (model): {plan.slo.replicas} x {shape.generation} {shape.topology} carry ")
    for part in ("NTPOT ", "TTFT ", "TTFT p99 ", "/h on-demand", "/M output tokens"):
        assert part in line, line

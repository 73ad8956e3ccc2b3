"""CI skips a stack for want of HF_TOKEN exactly when the program would refuse it for want of hfToken: the
derived answer (registry + catalogue) against the offline planner's own refusals, stack by stack."""

from pathlib import Path

import pytest
import yaml

from scripts.needs_hf_token import gated_stacks, needs_hf_token
from stacks.shipped import stack_files
from tpu_stacks.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
STACKS = list(stack_files(ROOT))  # any stack file: the script and the planner agree on each


def _refused_for_token(stack: str, capsys: pytest.CaptureFixture[str]) -> bool:
    """`tpu-stacks plan --stack S` without placeholder secrets, run in this process (the command's own `main`; a
    new interpreter per stack proved nothing more and cost a dozen SDK imports): refused, naming hfToken."""
    code = main(["plan", "--stack", stack, "--cwd", str(ROOT)])
    out, err = capsys.readouterr()
    return code != 0 and "hfToken" in out + err


def test_the_gated_stacks_are_the_ones_the_planner_refuses_without_a_token(capsys):
    gated = gated_stacks()
    assert gated == sorted(stack for stack in STACKS if _refused_for_token(stack, capsys))
    assert gated and set(gated) < set(STACKS)  # both answers occur among the stacks


def _stack_file(tmp_path: Path, config: dict, **top: object) -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({**top, "config": {"gcp:project": "p", **config}}))
    return path


@pytest.mark.parametrize(
    "config, top, expected",
    [
        ({"tpu-stacks:scenario": "vllm", "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-8B"}}, {}, True),
        ({"tpu-stacks:scenario": "jetstream", "tpu-stacks:jetstream": {"model": "google/gemma-7b-it"}}, {}, True),
        ({"tpu-stacks:scenario": "vllm", "tpu-stacks:vllm": {"model": "Qwen/Qwen2.5-1.5B-Instruct"}}, {}, False),
        # the stack file holds the token, or an ESC environment supplies it
        (
            {
                "tpu-stacks:scenario": "vllm",
                "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-8B"},
                "tpu-stacks:hfToken": {"secure": "v1:abc"},
            },
            {},
            False,
        ),
        (
            {"tpu-stacks:scenario": "vllm", "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-8B"}},
            {"environment": ["tpu/hf"]},
            False,
        ),
        # a workload that takes no token; a model the catalogue does not know (the offline plan says why)
        ({"tpu-stacks:scenario": "raytrain", "tpu-stacks:raytrain": {"model": "llama3-8b"}}, {}, False),
        ({"tpu-stacks:scenario": "vllm", "tpu-stacks:vllm": {"model": "no/such-model"}}, {}, False),
        ({"tpu-stacks:scenario": "cluster"}, {}, False),
    ],
)
def test_which_stack_files_need_the_repository_token(tmp_path, config, top, expected):
    assert needs_hf_token(_stack_file(tmp_path, config, **top)) is expected

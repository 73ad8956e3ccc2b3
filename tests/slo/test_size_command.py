"""The `tpu-stacks size` command a stack or the policy pack prints with an slo it cannot meet: it must carry every
engine setting that changes `size`'s answer (context, sequence cap, step budget, dtypes), and `size` must accept
each value it can carry. tests/slo/test_one_answer.py runs the command and compares the answer with the plan's."""

import json

import pytest

from tests.slo.test_plan import SHAREGPT, jetstream, one_line
from tpu_stacks.catalog.model_shape import BYTES_PER_DTYPE
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.cli.main import main
from tpu_stacks.errors import UserError
from tpu_stacks.slo.plan import EngineSettings, size_command
from tpu_stacks.traffic import TrafficTarget

GEMMA_7B = lookup_model("google/gemma-7b-it")  # a bf16 checkpoint: JetStream and vLLM serve it in bf16
TARGET = TrafficTarget(output_tokens_per_second=1000, ttft_ms=200, input_tokens=1000, output_tokens=100)


def command(engine="vllm", weight="bf16", kv="bf16", context=4096, batch=64, budget=None) -> str:
    return size_command(GEMMA_7B, TARGET, EngineSettings(engine, weight, kv, context, batch, budget))


def test_the_engine_settings_reach_the_command_in_sizes_flags():
    assert command(budget=512) == (
        "tpu-stacks size google/gemma-7b-it --output-tokens-per-second 1000 --ttft-ms 200 --input-tokens 1000 "
        "--output-tokens 100 --engine vllm --context 4096 --batch 64 --max-num-batched-tokens 512"
    )


def test_a_dtype_is_named_only_where_it_is_not_what_size_models_by_itself():
    assert "--dtype" not in command() and "--kv-dtype" not in command()  # bf16 checkpoint, bf16 cache: size's own
    assert command(weight="int8").endswith("--batch 64 --dtype int8")
    assert command(kv="int8").endswith("--batch 64 --kv-dtype int8")
    assert command(weight="fp8", kv="fp8").endswith("--dtype fp8 --kv-dtype fp8")


@pytest.mark.parametrize("dtype", list(BYTES_PER_DTYPE))
def test_size_accepts_every_dtype_a_command_can_carry(dtype, capsys):
    # a hand-written server the pack reads may run --dtype float16 or --kv-cache-dtype fp8 (catalog/engines/vllm.py)
    code = main(["size", "google/gemma-7b-it", "--tpu", "v6e", "--dtype", dtype, "--kv-dtype", dtype, "--json"])
    assert code == 0, capsys.readouterr().err


def test_a_jetstream_stack_with_an_int8_cache_names_it():
    with pytest.raises(UserError) as error:
        jetstream(slo={"outputTokensPerSecond": 1000, "ttftMs": 1, **SHAREGPT}, quantizeKvCache=True)
    assert "--engine jetstream --context 2048 --batch 32 --kv-dtype int8`" in one_line(error)


def test_an_async_scheduling_switch_reaches_the_command_and_size_takes_it(capsys):
    """A server given `--no-async-scheduling` (or `--async-scheduling`) is predicted with it; the command says so, and
    `size` answers with it: a shorter TTFT without the queued step. Other engines have no such setting."""
    off = size_command(GEMMA_7B, TARGET, EngineSettings("vllm", "bf16", "bf16", 4096, 64, 512, False))
    assert off.endswith("--max-num-batched-tokens 512 --no-async-scheduling")
    on = size_command(GEMMA_7B, TARGET, EngineSettings("vllm", "bf16", "bf16", 4096, 64, 512, True))
    assert on.endswith("--max-num-batched-tokens 512 --async-scheduling")
    assert "async" not in command(budget=512)

    def ttft(*switch: str) -> float:
        argv = ["size", "google/gemma-7b-it", "--tpu", "v6e", "--output-tokens-per-second", "1000", *switch, "--json"]
        assert main(argv) == 0
        answer = json.loads(capsys.readouterr().out)
        return next(c for c in answer["candidates"] if c["topology"] == "2x2")["per_replica"]["ttft_ms"]

    assert ttft("--no-async-scheduling") < ttft() == ttft("--async-scheduling")
    jetstream_argv = ["size", "google/gemma-7b-it", "--engine", "jetstream", "--output-tokens-per-second", "1000"]
    assert main([*jetstream_argv, "--no-async-scheduling"]) == 2
    assert capsys.readouterr().err == (
        "tpu-stacks: --no-async-scheduling: 'jetstream' has no async scheduling to switch (it schedules one step at a "
        "time); drop it\n"
    )

"""vLLM's own `--max-num-batched-tokens` when a server's arguments give none, per generation, as the traffic model,
`tpu-stacks size` and the policy pack use it; never the stack's spec default (which a stack always passes).

The expected numbers are read off the pinned upstreams, not this repository's tables (ledger rows named):
- vllm-tpu 0.29.0 `vllm/engine/arg_utils.py` `EngineArgs.get_batch_defaults`: the OpenAI API server's generic
  default is 2048 (line 2670, ledger: vllm.batch-default.api-server); on TPU a device named exactly V6E gets 1024,
  V5E 512, V5P 256 (lines 2681-2694, ledger: vllm.batch-default.v6e-chip, vllm.batch-default.v6e,
  vllm.batch-default.v5e-chip, vllm.batch-default.v5e, vllm.batch-default.v5p-chip, vllm.batch-default.v5p).
- tpu-inference 0.29.0 `tpu_inference/platforms/tpu_platform.py`: `get_device_total_memory` raises (line 257,
  ledger: tpu-inference.device-total-memory), and `get_device_name` returns "TPU " + tpu-info's chip member name
  (line 224, ledger: tpu-inference.device-name); tpu-info 0.7.1 `tpu_info/device.py` lines 42-46 name the chips V4,
  V5E, V5P, V6E, V7X (ledger: tpu-info.chip.v4, tpu-info.chip.v5e, tpu-info.chip.v5p, tpu-info.chip.v6e,
  tpu-info.chip.tpu7x). So vLLM compares "TPU V6E" with "V6E": no TPU branch matches at this pin, and every
  generation keeps the generic 2048. Ray Serve LLM asks in the same usage context (ledger: ray.serve-llm.usage-context).
"""

from __future__ import annotations

import json

import pytest

from tests.cli_run import tpu_stacks
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.traffic import TrafficTarget, size_for_traffic

VLLM_API_SERVER_DEFAULT = 2048
"""arg_utils.py line 2670: the generic branch, which every TPU generation keeps at vllm-tpu 0.29.0 (above)."""
THE_STACK_S = 512
"""vllm/spec.py's maxNumBatchedTokens default: what the traffic model wrongly took for an unset flag."""
LLAMA_8B = "meta-llama/Llama-3.1-8B"


def test_vllm_s_tpu_branches_are_keyed_by_a_bare_chip_name():
    from tpu_stacks.catalog.engine_traffic import VLLM_TPU_CHIP_BATCHED_TOKENS

    assert VLLM_TPU_CHIP_BATCHED_TOKENS == {"V6E": 1024, "V5E": 512, "V5P": 256}


def test_tpu_inference_names_each_generation_with_a_prefix_those_branches_never_match():
    from tpu_stacks.catalog.engine_traffic import VLLM_TPU_CHIP_BATCHED_TOKENS, VLLM_TPU_DEVICE_NAMES

    assert VLLM_TPU_DEVICE_NAMES == {
        "v4": "TPU V4",
        "v5e": "TPU V5E",
        "v5p": "TPU V5P",
        "v6e": "TPU V6E",
        "tpu7x": "TPU V7X",
    }
    assert not set(VLLM_TPU_DEVICE_NAMES.values()) & set(VLLM_TPU_CHIP_BATCHED_TOKENS)


def test_every_catalogued_generation_gets_the_api_server_s_generic_default():
    from tpu_stacks.catalog.engine_traffic import VLLM_DEFAULT_BATCHED_TOKENS, traffic_of
    from tpu_stacks.catalog.tpu import GENERATIONS

    assert VLLM_DEFAULT_BATCHED_TOKENS == {g.name: VLLM_API_SERVER_DEFAULT for g in GENERATIONS}
    vllm = traffic_of("vllm")
    assert {g.name: vllm.batched_tokens(g.name, None) for g in GENERATIONS} == VLLM_DEFAULT_BATCHED_TOKENS
    # a server that gives the flag keeps it; an engine that prefills apart has no step budget at all
    assert vllm.batched_tokens("v6e", 8192) == 8192
    assert traffic_of("jetstream").batched_tokens("v5e", None) is None


def _target(inputs: int, outputs: int) -> TrafficTarget:
    return TrafficTarget(output_tokens_per_second=5000, input_tokens=inputs, output_tokens=outputs)


@pytest.mark.parametrize(("gen", "inputs", "outputs"), [("v6e", 1800, 128), ("v5e", 3000, 100)])
def test_size_without_a_step_budget_models_vllm_s_own_default(gen, inputs, outputs):
    """`tpu-stacks size` has no --max-num-batched-tokens: every candidate is what vLLM runs with the flag unset."""
    model = lookup_model(LLAMA_8B)
    target = _target(inputs, outputs)
    own, stack = (
        size_for_traffic(model, target, generations=[gen], batched_tokens=budget).as_dict()["candidates"]
        for budget in (VLLM_API_SERVER_DEFAULT, THE_STACK_S)
    )
    assert own != stack  # the budget shows in these figures, so the test tells the two defaults apart
    shown = tpu_stacks(
        "size",
        LLAMA_8B,
        "--output-tokens-per-second",
        "5000",
        "--input-tokens",
        str(inputs),
        "--output-tokens",
        str(outputs),
        "--tpu",
        gen,
        "--json",
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["candidates"] == json.loads(json.dumps(own))


def test_size_models_the_step_budget_it_is_given():
    """`--max-num-batched-tokens` is the server's flag: a stack's 512 is modelled as 512 (tests/slo/test_one_answer.py
    gives the stack's settings so)."""
    model = lookup_model(LLAMA_8B)
    expected = size_for_traffic(model, _target(1800, 128), generations=["v6e"], batched_tokens=THE_STACK_S)
    shown = tpu_stacks(
        "size",
        LLAMA_8B,
        "--output-tokens-per-second",
        "5000",
        "--tpu",
        "v6e",
        "--max-num-batched-tokens",
        "512",
        "--json",
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["candidates"] == json.loads(json.dumps(expected.as_dict()["candidates"]))


def test_size_refuses_a_step_budget_where_it_means_nothing():
    jetstream = tpu_stacks(
        "size",
        "google/gemma-7b-it",
        "--output-tokens-per-second",
        "900",
        "--engine",
        "jetstream",
        "--max-num-batched-tokens",
        "512",
    )
    assert jetstream.returncode != 0
    assert "--max-num-batched-tokens: 512 is not a setting of jetstream" in jetstream.stderr
    no_target = tpu_stacks("size", LLAMA_8B, "--max-num-batched-tokens", "512")
    assert no_target.returncode != 0 and "--max-num-batched-tokens" in no_target.stderr
    assert "needs a traffic target" in no_target.stderr

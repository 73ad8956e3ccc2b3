"""What an engine declares for shared code (issue 34 item 2): how its command is recognised, how its arguments are
written, whether it trains, and its flags' aliases; the policy pack reads these instead of the engine's name."""

import pytest

from tpu_policies.engine_args import vllm_request
from tpu_stacks.catalog import engines
from tpu_stacks.catalog.engines import engine_of_command
from tpu_stacks.catalog.engines.declared import declarations
from tpu_stacks.catalog.engines.record import CommandMarker
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.raytrain.engine import MAXTEXT
from tpu_stacks.sglang.engine import SGLANG


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python3 -m vllm.entrypoints.openai.api_server --model m", VLLM),
        ("/usr/local/bin/vllm serve meta-llama/Llama-3.1-8B", VLLM),
        ("python3 -m MaxText.train run_name=x", MAXTEXT),
        ("python3 train.py /app/src/MaxText/configs/base.yml model_name=llama3-8b", MAXTEXT),
        ("vllm bench serve", None),  # `vllm` must be followed by `serve`
        ("python3 server.py --model m", None),
        ("serve vllm", None),
    ],
)
def test_an_engine_is_recognised_by_the_command_markers_it_declares(command, expected):
    assert engine_of_command(command.split()) is expected


def test_a_marker_needs_every_part_it_names():
    marker = CommandMarker(program="vllm", then="serve")
    assert marker.marks(["vllm", "serve"]) and not marker.marks(["vllm"]) and not marker.marks(["vllm", "run"])
    assert CommandMarker(program="base.yml").marks(["a/configs/base.yml"])
    assert not CommandMarker().marks(["anything"])


def test_each_engine_says_whether_it_serves_or_trains():
    assert engines.trains("maxtext") and MAXTEXT.arguments == "settings"
    assert not engines.trains("vllm") and not engines.trains("jetstream") and not engines.trains("nonesuch")
    declared = {d.name for d in declarations()}  # the engines workload folders declare (engine.py)
    assert {"jetstream", "maxtext", "saxml", "sglang"} <= declared
    assert {e.engine for e in engines.ENGINES if e.workload == "serve"} - declared == {"vllm"}
    # a recognised paged-KV server is read by flags its record declares, so every reader's meaning is there
    for engine in (VLLM, SGLANG):
        for meaning in ("model", "tensor_parallel", "context", "prefill_tokens", "weight_dtype", "kv_dtype"):
            assert engine.flag(meaning) is not None, (engine.engine, meaning)
    assert VLLM.model_after == "serve"


def test_the_quantization_alias_is_read_and_the_long_name_wins():
    short = vllm_request({"-q": "awq"}, "meta-llama/Llama-3.1-8B", "--model")
    assert short.request is None and short.problem.startswith("--quantization awq is not one")
    both = vllm_request({"-q": "awq", "--quantization": "fp8"}, "meta-llama/Llama-3.1-8B", "--model")
    assert both.problem is None and both.request.weight_dtype == "fp8"

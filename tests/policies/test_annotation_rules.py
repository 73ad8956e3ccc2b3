"""objects/annotations.py read back the way the policy pack reads it: a model's annotations must give the pack the same
model (parameters and KV cache), and the slo figures must be numbers the pack parses to what the stack computed.

The reader is the pack's own (`tpu_policies.fit._model`, which rebuilds a model outside the catalogue from
`tpu-stacks.dev/params` and `tpu-stacks.dev/attention`); the attention shapes are Gemma 2 9B's from its config.json
(google/gemma-2-9b: 42 layers, 8 KV heads, head_dim 256, 16 query heads, sliding_window 4096 on every other layer:
21), as the catalogue transcribes it.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tpu_policies.fit import _model as pack_model
from tpu_stacks.catalog.models import MODELS, ResolvedModel, custom_model
from tpu_stacks.objects import annotations as keys
from tpu_stacks.objects.annotations import for_serving, for_slo, for_training
from tpu_stacks.sizing import ServingRequest, TrainingRequest

GEMMA2 = next(m for m in MODELS if m.name == "gemma-2-9b")


def _kv(model: ResolvedModel) -> int:
    return model.architecture.attention.kv_bytes(8192, 4, 2)


def test_gemma_2_9b_is_the_shape_its_config_gives():
    a = GEMMA2.attention
    shape = (a.layers, a.kv_heads, a.head_dim, a.query_heads, a.sliding_window, a.windowed_layers)
    assert shape == (42, 8, 256, 16, 4096, 21)


def test_a_catalogued_model_is_named_not_described():
    notes = for_serving(ServingRequest(model=ResolvedModel(id="google/gemma-2-9b", architecture=GEMMA2)), 8)
    assert keys.ATTENTION not in notes
    assert (notes[keys.MODEL], notes[keys.PARAMS]) == ("google/gemma-2-9b", str(GEMMA2.params))


def test_a_model_from_its_own_config_json_reaches_the_pack_whole():
    own = ResolvedModel(id="me/gemma-like", architecture=GEMMA2.model_copy(update={"catalogued": False}))
    notes = for_serving(ServingRequest(model=own), 8)
    assert notes[keys.ATTENTION] == (
        "layers=42,kv_heads=8,head_dim=256,query_heads=16,sliding_window=4096,windowed_layers=21"
    )
    back = pack_model(notes)
    assert back.params == own.params
    assert _kv(back) == _kv(own)  # the windowed layers hold 4096 tokens, not 8192
    assert back.architecture.attention == own.architecture.attention


def test_a_custom_model_gives_its_count_and_shape_and_no_query_heads_it_does_not_need():
    custom = custom_model("mine", 7e9, 32, 8, 128, attention_extra={"query_heads": 32})
    notes = for_serving(ServingRequest(model=custom), 4)
    assert notes[keys.ATTENTION] == "layers=32,kv_heads=8,head_dim=128"  # its count is declared
    back = pack_model(notes)
    assert (back.params, _kv(back)) == (custom.params, _kv(custom))


def test_a_window_without_windowed_layers_is_not_written():
    plain = custom_model("mine", 7e9, 32, 8, 128, attention_extra={"sliding_window": 4096})
    assert for_serving(ServingRequest(model=plain), 4)[keys.ATTENTION] == "layers=32,kv_heads=8,head_dim=128"
    windowed = custom_model("mine", 7e9, 32, 8, 128, attention_extra={"sliding_window": 4096, "windowed_layers": 16})
    notes = for_serving(ServingRequest(model=windowed), 4)
    assert notes[keys.ATTENTION].endswith(",sliding_window=4096,windowed_layers=16")
    assert _kv(pack_model(notes)) == _kv(windowed)


def test_a_model_without_a_shape_gives_its_count_alone():
    notes = for_serving(ServingRequest(model=custom_model("mine", 7e9)), 4)
    assert keys.ATTENTION not in notes
    assert pack_model(notes).params == 7_000_000_000


def test_serving_and_training_annotations_carry_their_request():
    model = custom_model("mine", 7e9)
    serving = for_serving(ServingRequest(model=model, engine="vllm", context=4096, batch=16, prefill_tokens=2048), 8)
    assert {k: serving[k] for k in (keys.WORKLOAD, keys.ENGINE, keys.CONTEXT, keys.BATCH, keys.PREFILL_TOKENS)} == {
        keys.WORKLOAD: "serve",
        keys.ENGINE: "vllm",
        keys.CONTEXT: "4096",
        keys.BATCH: "16",
        keys.PREFILL_TOKENS: "2048",
    }
    assert serving[keys.TENSOR_PARALLEL] == "8"
    training = for_training(TrainingRequest(model=model, seq_len=2048, per_device_batch=0.5), {"fsdp": 4, "tensor": 2})
    assert (training[keys.WORKLOAD], training[keys.ENGINE], training[keys.BATCH]) == ("train", "maxtext", "0.5")
    assert training[keys.PARALLELISM] == "fsdp=4,tensor=2"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (1234.5, "1234.5"),
        (1234.5000001, "1234.5"),
        (1234.5678, "1234.57"),
        (2.0, "2"),
        (1200.0, "1200"),
        (0.0, "0"),
        (0.001, "0.001"),
        (-0.001, "-0.001"),
        (0.004, "0.004"),
        (1e-7, "0.0000001"),
    ],
)
def test_slo_numbers_are_plain_decimals_that_keep_a_small_limit(value, text):
    notes = for_slo({keys.SLO_NTPOT_MS: value}, {})
    assert notes == {keys.SLO_NTPOT_MS: text}
    assert Decimal(text) == round(Decimal(repr(value)), 2) or abs(value) < 0.005


def test_slo_annotations_keep_text_and_leave_unset_limits_out():
    notes = for_slo(
        {keys.SLO_OUTPUT_TOKENS_PER_SECOND: 500, keys.SLO_TTFT_MS: None},
        {keys.SLO_BASIS: "model", keys.SLO_REPLICAS: 2, keys.SLO_SOURCE: None},
    )
    assert notes == {keys.SLO_OUTPUT_TOKENS_PER_SECOND: "500", keys.SLO_BASIS: "model", keys.SLO_REPLICAS: "2"}

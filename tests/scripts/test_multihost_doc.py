"""docs/vllm.md's multi-host figures are the catalogue's and the memory model's, regenerated, never typed.

The KV cache arithmetic is checked against the model's published shape written out here (Llama 3.1 405B's
config.json: 126 layers, 8 KV heads, head dimension 128), not against the code that computes it.
"""

from __future__ import annotations

import pytest

from scripts import multihost_doc
from tpu_stacks.catalog.capacity import slice_prices
from tpu_stacks.catalog.models import custom_model, lookup_model
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.serving.serving_fit import sequence_fit
from tpu_stacks.sizing import ServingRequest, usable_bytes

V6E_4X8 = slice_shape(generation("v6e"), "4x8")


def test_the_doc_is_what_the_script_writes():
    """Regenerate with `venv/bin/python scripts/multihost_doc.py` when this fails."""
    text = multihost_doc.DOC.read_text()
    section = multihost_doc.figures(*multihost_doc.stack_spec())
    assert multihost_doc.replace_section(text, section) == text
    assert multihost_doc.main(["--check"]) == 0


def test_the_405b_kv_cache_per_sequence_is_replicated_four_times():
    model = lookup_model("meta-llama/Llama-3.1-405B-Instruct")
    fit = sequence_fit(ServingRequest(model=model, context=4096, prefill_tokens=512), V6E_4X8)
    one_copy = 2 * 2 * 128 * 8 * 126 * 4096  # K and V x bf16 x head_dim x KV heads x layers x tokens
    assert fit.replication == 32 // 8 == 4
    assert fit.per_sequence_bytes == one_copy * 4
    weights = 405_853_388_800 * 2
    assert weights < usable_bytes(V6E_4X8) and fit.free_bytes < usable_bytes(V6E_4X8) - weights
    assert fit.sequences == fit.free_bytes // (one_copy * 4) and 5 <= fit.sequences <= 15
    longer = sequence_fit(ServingRequest(model=model, context=8192, prefill_tokens=512), V6E_4X8)
    assert longer.per_sequence_bytes == 2 * fit.per_sequence_bytes and longer.sequences < fit.sequences


def test_no_replication_when_tensor_parallel_matches_the_kv_heads_and_none_fits_when_too_long():
    llama70 = lookup_model("meta-llama/Llama-3.1-70B")
    fit = sequence_fit(ServingRequest(model=llama70, context=4096), slice_shape(generation("v6e"), "2x4"))
    assert fit.replication == 1 and fit.per_sequence_bytes == 2 * 2 * 128 * 8 * 80 * 4096
    huge = sequence_fit(
        ServingRequest(model=lookup_model("meta-llama/Llama-3.1-405B-Instruct"), context=131072), V6E_4X8
    )
    assert huge.sequences == 0
    shapeless = custom_model("custom-7B", 7_000_000_000, None, None, None, params_key="p", shape_key="s")
    with pytest.raises(ValueError, match="attention shape unknown"):
        sequence_fit(ServingRequest(model=shapeless), V6E_4X8)


def test_the_doc_shows_the_slice_prices_and_the_sequences():
    text = multihost_doc.DOC.read_text()
    on_demand = next(p for p in slice_prices("v6e", 32) if p["kind"] == "onDemand")
    assert on_demand["usd_per_hour"] == pytest.approx(2.70 * 32)
    assert f"| on-demand | ${on_demand['usd_per_hour']:,.2f} |" in text
    assert "| spot | unknown |" in text  # no source gives it: never a guess
    assert "**10** at 4096 tokens" in text and "x 4 (tensor parallel 32 over 8 KV heads" in text


def test_the_stack_files_settings_win_over_the_defaults(tmp_path):
    assert multihost_doc.stack_spec(tmp_path)[0] == "`VllmSpec` defaults"
    (tmp_path / f"Pulumi.{multihost_doc.STACK}.yaml").write_text(
        "config:\n  tpu-stacks:vllm:\n    model: meta-llama/Llama-3.1-405B-Instruct\n    maxModelLen: 8192\n"
    )
    origin, spec = multihost_doc.stack_spec(tmp_path)
    assert origin == "`Pulumi.vllm-405b.yaml`" and spec.max_model_len == 8192
    section = multihost_doc.figures(origin, spec)
    assert "**5** at 8192 tokens; 21 at 2048" in section and "| full-length sequences at once |" in section

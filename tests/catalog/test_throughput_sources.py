"""Every published row of catalog/throughput_measurements.py against the document it cites, read from what
tests/catalog/fixtures holds of it (each names its URL at the pinned commit): the throughput, the slice, the batch,
the cache length, the dtype, the date, the server's flags and the client's lengths.

The fixtures are the sources' facts, kept apart from the rows (JetStream-PyTorch's result tables as they are; the
recipe's and the pull request's settings and results transcribed, by line, never their manifests or commands), so a
row typed wrong (or a number nudged) fails here, where tests/traffic/test_calibration.py only sees the fit move.
"""

import re
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import (
    JETSTREAM_PYTORCH_SUMMARY,
    MEASUREMENTS,
    QWEN3_CODER_480B,
    QWEN3_CODER_TPU7X,
    SHAREGPT_INPUT_TOKENS,
    SHAREGPT_OUTPUT_TOKENS,
    VLLM_TPU_V6E_8B,
    row_model,
)

FIXTURES = Path(__file__).parent / "fixtures"
ROWS = {row.id: row for row in MEASUREMENTS}
DTYPES = {"bfloat16": "bf16", "int8": "int8"}
MODELS = {"Llama 3 - 8B": "llama-3-8b", "Gemma - 7B": "gemma-7b"}


def _summary_rows() -> list[dict]:
    """The JetStream-PyTorch summary's table rows, each with the model of its section."""
    rows, model = [], None
    for line in (FIXTURES / "jetstream_pytorch_summary.md").read_text().splitlines():
        if line.startswith("## "):
            model = MODELS[line[3:].strip()]
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) == 8 and re.fullmatch(r"\d{4}-\d\d-\d\d", cells[0]):
            date, device, dtype, batch, cache, _, _, throughput = cells
            generation, chips = re.fullmatch(r"TPU (v\w+)-(\d+)", device).groups()
            rows.append(
                {
                    "model": model,
                    "date": date,
                    "generation": generation,
                    "chips": int(chips),
                    "weight_dtype": DTYPES[dtype],
                    "batch": int(batch),
                    "max_model_len": int(cache),
                    "output_tokens_per_second": float(throughput),
                }
            )
    return rows


def test_every_jetstream_row_is_a_row_of_the_summary():
    """JetStream-PyTorch's benchmarks/summary.md @ 2ba0dd8: the Llama 3 8B and Gemma 7B tables, one row each."""
    cited = [row for row in MEASUREMENTS if row.source == JETSTREAM_PYTORCH_SUMMARY]
    published = _summary_rows()
    assert len(cited) == len(published) == 5
    for row in cited:
        mine = {key: getattr(row, key) for key in published[0]}
        assert mine in published, row.id
        assert row_model(row).architecture.name == row.model
        assert row.kv_dtype == row.weight_dtype  # quantize_weights and quantize_kv_cache together (its run command)
        assert (row.input_tokens, row.output_tokens) == (SHAREGPT_INPUT_TOKENS, SHAREGPT_OUTPUT_TOKENS)
        assert row.length_ratio == 1.0  # the means, read as every request's lengths


def test_the_sharegpt_lengths_are_jetstream_pr_83s_means():
    """JetStream pull request 83: 214,914 input and 415,416 output tokens over 1,780 requests."""
    assert SHAREGPT_INPUT_TOKENS == round(214_914 / 1_780)
    assert SHAREGPT_OUTPUT_TOKENS == round(415_416 / 1_780)


def _facts(name: str) -> dict:
    return tomllib.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize(
    ("row_id", "result_line"),
    [("vllm-tpu7x-qwen3coder-1k1k", 658), ("vllm-tpu7x-qwen3coder-1k8k", 659), ("vllm-tpu7x-qwen3coder-8k1k", 660)],
)
def test_every_ironwood_row_is_the_recipes_run(row_id, result_line):
    """tpu-recipes' Qwen3-Coder-480B-A35B recipe for Ironwood @ 8f0a9d2 (fixtures/tpu_recipes_qwen3_coder_480b.toml,
    its facts by line): the server's flags (lines 227-235), the client's (InferenceX's `--random-range-ratio=0.8`
    draws lengths in [0.8 L, L]: the row keeps the centre, 0.9 L), and the result table (lines 658-660), whose
    per-chip figure gives the chips."""
    recipe, row = _facts("tpu_recipes_qwen3_coder_480b.toml"), ROWS[row_id]
    (run,) = [r for r in recipe["run"] if r["result_line"] == result_line]
    assert row_model(row).architecture is QWEN3_CODER_480B and run["model"] in QWEN3_CODER_480B.hf_ids
    assert row.source == QWEN3_CODER_TPU7X and row.note.startswith(f"line {result_line};")
    server = recipe["server"]
    assert row.max_model_len == server["max-model-len"]
    assert row.batched_tokens == server["max-num-batched-tokens"]
    assert row.memory_fraction == server["gpu-memory-utilization"]
    assert row.page_tokens == server["block-size"]
    assert row.kv_dtype == server["kv-cache-dtype"]
    assert row.topology == recipe["slice"]["topology"]
    ratio = run["random-range-ratio"]
    assert row.length_ratio == ratio
    assert row.input_tokens == round((1 + ratio) / 2 * run["random-input-len"])
    assert row.output_tokens == round((1 + ratio) / 2 * run["random-output-len"])
    assert row.prompts == run["num-prompts"]
    assert row.concurrency == row.batch == run["max-concurrency"]
    assert row.output_tokens_per_second == run["output_tokens_per_second"]
    assert row.chips == round(run["output_tokens_per_second"] / run["per_chip"])


def test_the_v6e_row_is_the_prs_before_run():
    """vLLM pull request 16458's "Before" run (fixtures/vllm_pr_16458.toml, its facts); benchmark_serving.py sends
    1,000 prompts by default (its `--num-prompts`), all at once (request rate inf)."""
    pr = _facts("vllm_pr_16458.toml")
    row = ROWS["vllm-v6e-llama3-8b"]
    assert row.source == VLLM_TPU_V6E_8B
    server, client = pr["server"], pr["client"]
    served = lookup_model(server["model"]).architecture  # Llama 3.1 8B: Llama 3 8B's weights
    assert row_model(row).architecture.name == "llama-3-8b" and row_model(row).architecture.same_weights(served)
    assert row.memory_fraction == server["gpu-memory-utilization"]
    assert row.batched_tokens == server["max-num-batched-tokens"]
    assert row.max_model_len == server["max-model-len"]
    assert row.batch_cap == server["max_num_seqs"]
    assert row.chips == int(re.fullmatch(r"v6e-(\d+)", pr["slice"])[1]) == 1
    assert row.input_tokens == client["random-input-len"]
    assert row.output_tokens == client["random-output-len"]
    assert row.output_tokens_per_second == pr["result"]["output_tokens_per_second"]
    assert row.prompts == 1000
    assert "random-range-ratio" not in client and row.length_ratio == 1.0  # the script's default then: exact lengths


@pytest.mark.parametrize("field", ["chips", "input_tokens", "output_tokens", "output_tokens_per_second"])
def test_a_row_counts_from_one_and_refuses_nothing(field):
    """A row of one chip, a one-token prompt or answer, or under one token a second is a row; zero of any is not."""
    row = ROWS["vllm-v6e-llama3-8b"].model_dump()
    small = 0.5 if field == "output_tokens_per_second" else 1
    assert getattr(type(ROWS["vllm-v6e-llama3-8b"]).model_validate({**row, field: small}), field) == small
    with pytest.raises(ValidationError):
        type(ROWS["vllm-v6e-llama3-8b"]).model_validate({**row, field: 0})


def test_qwen3_coder_activates_35b_of_its_480b():
    """The model card's "480B-parameter Mixture-of-Experts model with 35B active parameters": 8 of 160 experts."""
    assert round(QWEN3_CODER_480B.params / 1e9) == 480
    assert round(QWEN3_CODER_480B.active_params / 1e9) == 35
